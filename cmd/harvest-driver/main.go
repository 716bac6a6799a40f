// Command harvest-driver is the harvest Nomad task-driver plugin. Nomad
// clients launch it from their plugin_dir; run by hand it prints its help or
// version.
package main

import (
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/nomad/plugins"

	"github.com/harvest-platform/harvest/driver"
	"github.com/harvest-platform/harvest/internal/command"
)

const usage = `Usage: harvest-driver [--version] [--help]

  The harvest task driver is a Nomad plugin: put this binary in a Nomad
  client's plugin_dir and configure it there:

    plugin "harvest-driver" {
      config {
        enabled = true
      }
    }

  Jobs then use driver = "harvest". Nomad starts the plugin itself.
`

func main() {
	if command.PluginHelpOrVersion("harvest-driver", usage) {
		return
	}
	var d *driver.Driver
	plugins.Serve(func(logger hclog.Logger) interface{} { d = driver.New(logger); return d })
	// Nomad stopped the plugin (Serve returns after its graceful shutdown);
	// Nomad never calls Shutdown itself, and a usage plugin the driver
	// started must not outlive it.
	d.Shutdown()
	goplugin.CleanupClients()
}
