// Command harvest-sim: The harvest simulator replays a datacenter's primary tenants, batch jobs and reimages against Harvest's own placement algorithms.
package main

import (
	"os"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
)

const synopsis = "The harvest simulator replays a datacenter's primary tenants, batch jobs and reimages against Harvest's own placement algorithms."

func main() {
	os.Exit(command.Main("harvest-sim", synopsis, os.Args[1:], commands()))
}

func commands() map[string]cli.CommandFactory {
	return map[string]cli.CommandFactory{
		"storage":     storageCommand(),
		"access":      accessCommand(),
		"sched":       schedCommand(),
		"hybrid":      hybridCommand(),
		"escalation":  escalationCommand(),
		"packing":     packingCommand(),
		"maintenance": maintenanceCommand(),
	}
}
