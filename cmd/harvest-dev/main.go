// Command harvest-dev: harvest-dev is the developer's command line for
// Harvest: measurements of the platform's mechanisms on this machine, apart
// from harvestctl, the operator's.
package main

import (
	"os"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
)

const synopsis = "harvest-dev is the developer's command line for Harvest: the local cluster, and measurements of Harvest's mechanisms on this machine."

func main() {
	burnIfAsked()
	actAsHelperIfAsked()
	os.Exit(command.Main("harvest-dev", synopsis, os.Args[1:], commands()))
}

func commands() map[string]cli.CommandFactory {
	cmds := devClusterCommands()
	for name, f := range benchCommands() {
		cmds[name] = f
	}
	cmds["measure"] = command.Group("harvest-dev measure", "Measure a mechanism of Harvest on this machine", "harvest-dev measure <readings>", "readings")
	cmds["measure readings"] = readingsCommand()
	cmds["testbed"] = testbedCommand()
	cmds["standin"] = standinCommand()
	cmds["standin-load"] = standinLoadCommand()
	cmds["burn"] = burnCommand()
	return cmds
}
