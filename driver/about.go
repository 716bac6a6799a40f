// Package driver is the harvest Nomad task-driver plugin: it runs harvested
// tasks on a server whose primary tenant keeps priority over them.
//
// This file holds what the driver is (name, version, config specs and
// capabilities); driver.go holds what it does.
package driver

import (
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"

	"github.com/harvest-platform/harvest/internal/version"
)

// Name is the driver name jobs use: `driver = "harvest"`.
const Name = "harvest"

var pluginInfo = &base.PluginInfoResponse{
	Type:              base.PluginTypeDriver,
	PluginApiVersions: []string{drivers.ApiVersion010},
	PluginVersion:     version.Number(),
	Name:              Name,
}

// configSpec is the plugin "harvest" { config { ... } } block of a Nomad client.
var configSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	"enabled": hclspec.NewDefault(
		hclspec.NewAttr("enabled", "bool", false),
		hclspec.NewLiteral("true"),
	),
})

// taskConfigSpec is a task's config { ... } block.
var taskConfigSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	"command": hclspec.NewAttr("command", "string", true),
	"args":    hclspec.NewAttr("args", "list(string)", false),
})

var capabilities = &drivers.Capabilities{
	SendSignals: true,
	Exec:        false,
	FSIsolation: drivers.FSIsolationNone,
}

// Config is the decoded plugin config block.
type Config struct {
	Enabled bool `codec:"enabled"`
}

// TaskConfig is the decoded task config block.
type TaskConfig struct {
	Command string   `codec:"command"`
	Args    []string `codec:"args"`
}
