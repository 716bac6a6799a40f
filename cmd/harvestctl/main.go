// Command harvestctl: harvestctl is the operator's command line for Harvest.
package main

import (
	"os"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
)

const synopsis = "harvestctl is the operator's command line for Harvest."

func main() {
	os.Exit(command.Main("harvestctl", synopsis, os.Args[1:], commands()))
}

func commands() map[string]cli.CommandFactory {
	cmds := map[string]cli.CommandFactory{}
	for name, f := range historyCommands() {
		cmds[name] = f
	}
	for name, f := range classesCommands() {
		cmds[name] = f
	}
	for name, f := range blobCommands() {
		cmds[name] = f
	}
	for name, f := range dagCommands() {
		cmds[name] = f
	}
	for name, f := range maintenanceCommands() {
		cmds[name] = f
	}
	for name, f := range explainCommands() {
		cmds[name] = f
	}
	cmds["classify"] = classifyCommand()
	cmds["packing"] = packingCommand()
	return cmds
}
