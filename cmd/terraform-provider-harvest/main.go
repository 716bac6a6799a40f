// Command terraform-provider-harvest is Harvest's Terraform provider. Terraform
// starts it; run by hand with -debug it prints TF_REATTACH_PROVIDERS for a
// debugger session.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/harvest-platform/harvest/internal/version"
	"github.com/harvest-platform/harvest/terraform/provider"
)

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version.Version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
