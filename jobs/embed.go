// Package jobs holds the Nomad jobs that run Harvest itself (the *.nomad.hcl
// files beside it) and embeds them, so the Terraform provider registers
// exactly the jobs this folder ships.
package jobs

import (
	"embed"
	"fmt"
	"strings"
)

// Platform holds harvest-storage, harvest-blob and harvest-placer.
//
//go:embed harvest-*.nomad.hcl
var Platform embed.FS

// Platform job names, in the order they are brought up: storage nodes first
// (the front lists them when it starts), then the front, then the placer.
var PlatformOrder = []string{"harvest-storage", "harvest-blob", "harvest-placer"}

// File is the file name of a platform job.
func File(name string) string { return name + ".nomad.hcl" }

// ACL holds the least-privilege ACL policies of Harvest's components
// (acl/<component>.nomad.hcl, acl/<component>.consul.hcl), templates with
// ${prefix} (the Consul KV prefix) and ${namespace} (the Nomad namespace
// harvested jobs run in) for Policy to fill in, as the Terraform module's
// templatefile() does.
//
//go:embed acl/*.hcl
var ACL embed.FS

// Policy is one of the ACL policies with its variables filled in; name is
// the file's name without .hcl ("placer.nomad", "driver.consul", ...).
func Policy(name string, vars map[string]string) (string, error) {
	b, err := ACL.ReadFile("acl/" + name + ".hcl")
	if err != nil {
		return "", err
	}
	s := string(b)
	for k, v := range vars {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
	}
	if i := strings.Index(s, "${"); i >= 0 {
		return "", fmt.Errorf("policy %s: variable %s left unset", name, s[i:min(len(s), i+20)])
	}
	return s, nil
}
