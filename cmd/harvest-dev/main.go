// Command harvest-dev: harvest-dev is the developer's command line for
// Harvest: measurements of the platform's mechanisms on this machine, apart
// from harvestctl, the operator's.
package main

import (
	"os"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
)

const synopsis = "harvest-dev measures Harvest's mechanisms on this machine (developer tooling)."

func main() {
	actAsHelperIfAsked()
	os.Exit(command.Main("harvest-dev", synopsis, os.Args[1:], commands()))
}

func commands() map[string]cli.CommandFactory {
	return map[string]cli.CommandFactory{
		"measure":          command.Group("harvest-dev measure", "Measure a mechanism of Harvest on this machine", "harvest-dev measure <readings>", "readings"),
		"measure readings": readingsCommand(),
	}
}
