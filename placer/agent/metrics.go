package agent

import (
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/observability/metricset"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/plugins/manager"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the placer's Prometheus metrics.
type Metrics struct {
	Registry        *prometheus.Registry
	refreshes       *prometheus.CounterVec
	refreshDuration prometheus.Histogram
	classes         *prometheus.GaugeVec
	unclassified    prometheus.Gauge
	labelUpdates    prometheus.Counter
	lastRefresh     prometheus.Gauge
	// history_import (historyimport.go)
	historyImportFailures prometheus.Counter
	historyImportLast     prometheus.Gauge
	// reading tenant history (readHistory)
	stageDuration *prometheus.HistogramVec
	readDuration  *prometheus.HistogramVec
	daysRead      prometheus.Counter
	valuesRead    prometheus.Counter
	bytesRead     prometheus.Counter
	// AuthRefusals counts API requests refused for their token (auth.go).
	AuthRefusals *prometheus.CounterVec
}

// NewMetrics registers the placer's metrics in a registry of their own,
// with the Go runtime and process collectors beside them.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_placer_refreshes_total", Help: "Classification refreshes, by result.",
		}, []string{"result"}),
		refreshDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "harvest_placer_refresh_seconds", Help: "Time one classification refresh takes.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}),
		classes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "harvest_placer_classes", Help: "Utilisation classes, by pattern.",
		}, []string{"pattern"}),
		unclassified: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_unclassified_tenants", Help: "Tenants without enough readable history to classify.",
		}),
		labelUpdates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "harvest_placer_node_label_updates_total", Help: "Node metadata updates applied.",
		}),
		lastRefresh: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_last_refresh_timestamp_seconds", Help: "When the class table was last refreshed.",
		}),
		historyImportFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "harvest_placer_history_import_failures_total",
			Help: "history_import pulls that failed (nothing written; retried at the next interval).",
		}),
		historyImportLast: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_history_import_last_success_timestamp_seconds",
			Help: "End of the range the last successful history_import pull wrote.",
		}),
		stageDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "harvest_placer_refresh_stage_seconds", Help: "Time each stage of a refresh takes (read, classify, survival).",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}, []string{"stage"}),
		readDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "harvest_placer_history_read_seconds", Help: "Time reading tenant history from Consul takes, cold (nothing cached) or incremental.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}, []string{"kind"}),
		daysRead: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "harvest_placer_history_days_read_total", Help: "Days of history re-read because something in them changed.",
		}),
		valuesRead: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "harvest_placer_history_values_read_total", Help: "KV values (tenant days and bundles) read from Consul.",
		}),
		bytesRead: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "harvest_placer_history_bytes_read_total", Help: "Bytes of KV values read from Consul.",
		}),
		AuthRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_placer_api_refusals_total",
			Help: "API requests refused for their token, by status (401 no or unknown token, 403 not allowed, 503 not checkable).",
		}, []string{"status"}),
	}
	m.register(m.Registry)
	return m
}

func (m *Metrics) register(reg prometheus.Registerer) {
	reg.MustRegister(m.stageDuration, m.readDuration, m.daysRead, m.valuesRead, m.bytesRead)
	reg.MustRegister(m.AuthRefusals, m.refreshes, m.refreshDuration, m.classes, m.unclassified, m.labelUpdates, m.lastRefresh,
		m.historyImportFailures, m.historyImportLast,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
}

// MetricNames are the series the placer serves at /v1/metrics: its own
// harvest_placer_*, the placement strategies', the admission proxy's harvest_proxy_*
// and history_import's harvest_plugin_* (with the Go and process
// collectors' go_* and process_*), named from the collectors NewMetrics,
// newStrategyMetrics, proxy.NewMetrics and the plugin manager build
// (observability's test checks the dashboard and the alerts against them).
func MetricNames() []string {
	rec := metricset.NewRecorder()
	NewMetrics().register(rec)
	newStrategyMetrics(rec)
	proxy.NewMetrics(rec)
	manager.RegisterMetrics(rec)
	return rec.Names()
}

var _ classes.Observer = (*Metrics)(nil)

// ObserveRefresh counts a refresh and its duration (classes.Observer).
func (m *Metrics) ObserveRefresh(d time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.refreshes.WithLabelValues(result).Inc()
	m.refreshDuration.Observe(d.Seconds())
}

// ObserveTable records the stored class table and the label updates.
func (m *Metrics) ObserveTable(t *api.ClassTable, updates int) {
	if m == nil {
		return
	}
	m.classes.Reset()
	for _, c := range t.Classes {
		m.classes.WithLabelValues(string(c.Pattern)).Inc()
	}
	m.unclassified.Set(float64(len(t.Unclassified)))
	m.labelUpdates.Add(float64(updates))
	m.lastRefresh.Set(float64(t.Generated.Unix()))
}

// ObserveStage records how long a refresh stage took.
func (m *Metrics) ObserveStage(stage string, d time.Duration) {
	if m != nil {
		m.stageDuration.WithLabelValues(stage).Observe(d.Seconds())
	}
}

// ObserveRead records a history read.
func (m *Metrics) ObserveRead(st history.CacheStats) {
	if m == nil {
		return
	}
	kind := "incremental"
	if st.Cold {
		kind = "cold"
	}
	m.readDuration.WithLabelValues(kind).Observe(st.Took.Seconds())
	m.daysRead.Add(float64(st.DaysRead))
	m.valuesRead.Add(float64(st.Keys))
	m.bytesRead.Add(float64(st.Bytes))
}
