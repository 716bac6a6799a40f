// Command harvest-usage-prometheus is an external usage-source plugin for
// the harvest driver: it measures a node from a Prometheus text endpoint
// (node_exporter's /metrics, and optionally a cgroup exporter's such as
// cAdvisor's for the primary tenant alone). It is started by the plugin
// manager over go-plugin, never by hand, and is built only against Harvest's
// plugin SDK (plugins/), as a third party's plugin would be.
//
// Config (the usage_source block's config map):
//
//	url                   node_exporter endpoint, e.g. http://127.0.0.1:9100/metrics (required)
//	primary_url           endpoint of the primary's metrics (default: url)
//	primary_cpu_metric    counter of the primary's CPU seconds, e.g. container_cpu_usage_seconds_total
//	primary_memory_metric gauge of the primary's memory bytes, e.g. container_memory_working_set_bytes
//	primary_labels        label matchers picking the primary's series, k=v[,k=v...], e.g. id=/primary
//	capacity_cpu_cores    override the capacity read from the endpoint
//	capacity_memory_bytes override the capacity read from the endpoint
//	timeout               per scrape (default 5s)
//	first_interval        gap between the two scrapes of the first Sample (default 250ms)
//
// What it reads from url: node_cpu_seconds_total{cpu,mode} (capacity = the
// number of distinct cpu labels; host use = the rate of every mode but idle
// and iowait, between this Sample's scrape and the previous one's),
// node_memory_MemTotal_bytes (capacity) and node_memory_MemAvailable_bytes
// (host use = total - available). Without primary_* metrics the sample is
// host-measured (the driver subtracts its harvested tasks); with both, the
// primary's CPU is the rate of the sum of the matching series of
// primary_cpu_metric and its memory their sum of primary_memory_metric, and
// the sample says it measured the primary alone.
//
// A counter is rated over the time it was true: the sample's own timestamp
// where the exporter stamps its series (cAdvisor does), else when the scrape
// began, as Prometheus stamps a scrape. A scrape whose stamped counters have
// not moved since the last one repeats the last rate with its time.
package main

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

func main() {
	log := hclog.New(&hclog.LoggerOptions{Name: "harvest-usage-prometheus", JSONFormat: true, Output: os.Stderr, Level: hclog.Info})
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: base.Handshake,
		Plugins:         usagesource.PluginSet(newSource(log)),
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger:          log,
	})
}
