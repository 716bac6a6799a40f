package manager_test

import (
	"context"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/manager"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// How a component wires its built-ins and the operator's external plugins:
// the driver samples the "node" block's plugin, and its own /proc source
// (registered as the built-in "proc") while that plugin is down.
func ExampleManager_Fallback() {
	var procSource func(hclog.Logger) (usagesource.Source, error)        // the driver's /proc source, adapted
	var csvImporter func(hclog.Logger) (historyimporter.Importer, error) // harvestctl's CSV reader, adapted
	src, _ := os.ReadFile("/etc/harvest/plugins.hcl")                    // plugin_dir, usage_source "node" {...}, usage_source "proc" { driver = "proc" }
	cfg, err := manager.ParseConfig(src, "/etc/harvest/plugins.hcl")
	if err != nil {
		return
	}
	m, err := manager.New(cfg, manager.Builtins{
		UsageSources:     map[string]func(hclog.Logger) (usagesource.Source, error){"proc": procSource},
		HistoryImporters: map[string]func(hclog.Logger) (historyimporter.Importer, error){"csv-long": csvImporter},
	}, manager.Options{Logger: hclog.Default(), Registerer: prometheus.DefaultRegisterer,
		OnState: func(s manager.State) { hclog.Default().Info("plugin", "name", s.Name, "up", s.Up) }})
	if err != nil {
		return
	}
	defer m.Close()
	usage, err := m.Fallback("node", "proc")
	if err != nil {
		return
	}
	u, err := usage.Sample(context.Background()) // the plugin's, or the built-in's while it is down
	_, _ = u, err
}
