package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/placer/greylist"
	"github.com/harvest-platform/harvest/placer/packing"
)

// strategyMetrics are the placement strategies' Prometheus metrics.
type strategyMetrics struct {
	tiers       *prometheus.GaugeVec
	releasable  prometheus.Gauge
	failures    *prometheus.CounterVec
	greylisted  prometheus.Gauge
	escalations *prometheus.CounterVec
	cutoff      prometheus.Gauge
	partition   prometheus.Gauge
}

func newStrategyMetrics(reg prometheus.Registerer) *strategyMetrics {
	m := &strategyMetrics{
		tiers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "harvest_placer_packing_nodes", Help: "Ready harvested nodes by packing tier.",
		}, []string{"tier"}),
		releasable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_packing_releasable_nodes", Help: "Nodes empty of harvested work for at least release_after.",
		}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_placer_allocation_failures_total", Help: "Failed harvested allocations, by kind (only \"node\" counts toward greylisting).",
		}, []string{"kind"}),
		greylisted: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_greylisted_nodes", Help: "Nodes greylisted now.",
		}),
		escalations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_placer_escalations_total", Help: "Placement escalations of blocked harvested jobs, by step.",
		}, []string{"step"}),
		cutoff: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_partition_cutoff_seconds", Help: "The short/long job cutoff.",
		}),
		partition: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_partition_nodes", Help: "Nodes on the short-job partition.",
		}),
	}
	reg.MustRegister(m.tiers, m.releasable, m.failures, m.greylisted, m.escalations, m.cutoff, m.partition)
	return m
}

func (m *strategyMetrics) packing(tiers map[packing.Tier]int, releasable int) {
	for _, t := range []packing.Tier{packing.High, packing.Medium, packing.Low} {
		m.tiers.WithLabelValues(string(t)).Set(float64(tiers[t]))
	}
	m.releasable.Set(float64(releasable))
}

func (m *strategyMetrics) failure(kind greylist.FailureKind) {
	m.failures.WithLabelValues(string(kind)).Inc()
}
