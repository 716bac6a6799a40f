// Package roomdevice owns the harvest-room device plugin: the harvest
// driver's room in Nomad's own resource accounting. The driver writes what
// it could harvest now into its room file (contract.RoomFile); this plugin,
// on the same client, reads it every period and serves the device
// contract.RoomDevice with one instance per core of the node, as many of
// them healthy as the driver could harvest (health.go). The admission proxy
// asks each harvest task for its cores in instances, so Nomad's scheduler
// counts every placed allocation against the room before its task starts,
// within an evaluation and across evaluations, as YARN-H's ResourceManager
// counts containers against the capacity its NodeManagers report
// (history-based-harvesting.txt, Section 5, "Primary tenant awareness").
// The driver's admission stays the safety net.
package roomdevice

import (
	"time"

	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/device"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/version"
)

var pluginInfo = &base.PluginInfoResponse{
	Type:              base.PluginTypeDevice,
	PluginApiVersions: []string{device.ApiVersion010},
	PluginVersion:     version.Number(),
	Name:              contract.RoomDevicePlugin,
}

// Defaults of the plugin's options.
const (
	// DefaultPeriod is how often the room file is read: the driver
	// compares its room every second (driver/room.go).
	DefaultPeriod = time.Second
	// DefaultStaleAfter is how old a room file may be before the device
	// offers nothing: the driver rewrites it every second while it runs.
	DefaultStaleAfter = 10 * time.Second
)

// configSpec is the plugin block's config.
var configSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	// room_file: the harvest driver's room_file on this client
	"room_file":   hclspec.NewAttr("room_file", "string", true),
	"period":      hclspec.NewDefault(hclspec.NewAttr("period", "string", false), hclspec.NewLiteral(`"1s"`)),
	"stale_after": hclspec.NewDefault(hclspec.NewAttr("stale_after", "string", false), hclspec.NewLiteral(`"10s"`)),
})

// Config is the plugin block's config.
type Config struct {
	RoomFile   string `codec:"room_file"`
	Period     string `codec:"period"`
	StaleAfter string `codec:"stale_after"`
}
