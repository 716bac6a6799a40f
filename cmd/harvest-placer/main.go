// Command harvest-placer: The harvest placer learns each primary tenant's utilisation pattern, labels Nomad nodes with their class, and sits in front of Nomad's HTTP API to place harvested jobs.
package main

import (
	"os"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
)

const synopsis = "The harvest placer learns each primary tenant's utilisation pattern, labels Nomad nodes with their class, and sits in front of Nomad's HTTP API to place harvested jobs."

func main() {
	os.Exit(command.Main("harvest-placer", synopsis, os.Args[1:], commands()))
}

func commands() map[string]cli.CommandFactory {
	return map[string]cli.CommandFactory{
		"agent": func() (cli.Command, error) { return &agentCommand{}, nil },
	}
}
