// Package observability owns Harvest's monitoring artefacts: the Grafana
// dashboard (grafana-dashboard.json) and the Prometheus alerting rules
// (alerts.yml) for the harvest driver, the placer and its admission proxy,
// the blob front and their plugins, embedded as Dashboard and Alerts, and
// MetricsIn, which names the series a PromQL expression selects.
//
// Its unit test checks that every harvest_* series the dashboard and the
// alerts use is one the code serves, with the names taken from the
// components' real collectors (driver.MetricNames, agent.MetricNames,
// front.MetricNames, built on metricset), so a renamed or removed metric
// fails `make unit` instead of leaving an empty panel or a silent alert.
package observability

import _ "embed"

// Dashboard is the Grafana dashboard (schema 39; its Prometheus data source
// is the ${DS_PROMETHEUS} variable). Import it in Grafana, or provision it
// from a file.
//
//go:embed grafana-dashboard.json
var Dashboard []byte

// Alerts is the Prometheus rule file (rule_files in prometheus.yml).
//
//go:embed alerts.yml
var Alerts []byte
