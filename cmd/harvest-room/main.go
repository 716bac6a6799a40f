// Command harvest-room is the harvest-room Nomad device plugin: the harvest
// driver's room as instances of the device harvest/room/cpu, so that Nomad's
// scheduler counts harvested allocations against it (driver/roomdevice).
// Nomad clients launch it from their plugin_dir; run by hand it prints its
// help or version.
package main

import (
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins"

	"github.com/harvest-platform/harvest/driver/roomdevice"
	"github.com/harvest-platform/harvest/internal/command"
)

const usage = `Usage: harvest-room [--version] [--help]

  The harvest-room device plugin is a Nomad plugin: put this binary in a
  Nomad client's plugin_dir beside harvest-driver, and give both the same
  room file:

    plugin "harvest-driver" {
      config {
        room_file = "/var/lib/nomad/harvest-room.json"
      }
    }
    plugin "harvest-room" {
      config {
        room_file = "/var/lib/nomad/harvest-room.json"
      }
    }

  The admission proxy then asks each harvest task for its cores as
  instances of harvest/room/cpu. Nomad starts the plugin itself.
`

func main() {
	if command.PluginHelpOrVersion("harvest-room", usage) {
		return
	}
	plugins.Serve(func(logger hclog.Logger) interface{} { return roomdevice.New(logger) })
}
