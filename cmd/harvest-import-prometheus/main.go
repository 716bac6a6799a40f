// Command harvest-import-prometheus is an external history-importer plugin:
// it reads tenant CPU utilisation and reimage events from a Prometheus
// server's HTTP API (query_range) and streams them to `harvestctl history
// import` or the placer. It is started by the plugin manager over
// go-plugin, never by hand, and is built only against Harvest's plugin SDK
// (plugins/), as a third party's plugin would be.
//
// Config (the history_importer block's config map):
//
//	address                  Prometheus base URL, e.g. http://127.0.0.1:9090 (required)
//	query.<tenant>           PromQL giving the tenant's CPU percent (0-100), one series per node
//	query_template           PromQL for tenants without their own query; $tenant, $environment
//	                         and $function are replaced by the tenant's name and its parts
//	node_label               label naming the node in each result series (default instance)
//	reimage_query.<tenant>   PromQL whose value changes when a node is reimaged, e.g.
//	reimage_query_template   node_boot_time_seconds{harvest_tenant="$tenant"}
//	chunk_steps              points per query_range call (default 10000; Prometheus allows 11000)
//	timeout                  per query (default 2m)
//
// Queries are stepped to the history's 2-minute slots: a series chunk per
// node and window, starting at the window's first slot, NaN where
// Prometheus returned no point. A reimage is the first step at which a
// node's reimage query shows a value different from its previous one (the
// first value is only the baseline). With no tenants asked, every tenant
// with a query.<tenant> is imported.
//
// Example block:
//
//	history_importer "prometheus" {
//	  driver = "harvest-import-prometheus"
//	  config = {
//	    address                = "http://127.0.0.1:9090"
//	    query_template         = "100 * avg by (instance) (rate(node_cpu_seconds_total{mode!=\"idle\",harvest_tenant=\"$tenant\"}[2m]))"
//	    reimage_query_template = "node_boot_time_seconds{harvest_tenant=\"$tenant\"}"
//	  }
//	}
package main

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

func main() {
	log := hclog.New(&hclog.LoggerOptions{Name: "harvest-import-prometheus", JSONFormat: true, Output: os.Stderr, Level: hclog.Info})
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: base.Handshake,
		Plugins:         historyimporter.PluginSet(&importer{log: log}),
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger:          log,
	})
}
