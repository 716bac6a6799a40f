// Command harvest-blob: The harvest blob tier serves datasets to S3 clients from MinIO servers on harvested nodes, placing replicas across the reimage x peak-CPU diversity grid.
package main

import (
	"os"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
)

const synopsis = "The harvest blob tier serves datasets to S3 clients from MinIO servers on harvested nodes, placing replicas across the reimage x peak-CPU diversity grid."

func main() {
	os.Exit(command.Main("harvest-blob", synopsis, os.Args[1:], commands()))
}

func commands() map[string]cli.CommandFactory {
	return map[string]cli.CommandFactory{
		"agent":   agentCommand(),
		"rebuild": rebuildCommand(),
	}
}
