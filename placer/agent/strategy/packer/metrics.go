package packer

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/placer/packing"
)

// Metrics are packing's Prometheus metrics.
type Metrics struct {
	tiers      *prometheus.GaugeVec
	releasable prometheus.Gauge
}

// NewMetrics registers packing's metrics in reg (whether packing is on or
// not: the placer serves them either way).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		tiers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "harvest_placer_packing_nodes", Help: "Ready harvested nodes by packing tier.",
		}, []string{"tier"}),
		releasable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_packing_releasable_nodes", Help: "Nodes empty of harvested work for at least release_after.",
		}),
	}
	reg.MustRegister(m.tiers, m.releasable)
	return m
}

func (m *Metrics) observe(tiers map[packing.Tier]int, releasable int) {
	for _, t := range []packing.Tier{packing.High, packing.Medium, packing.Low} {
		m.tiers.WithLabelValues(string(t)).Set(float64(tiers[t]))
	}
	m.releasable.Set(float64(releasable))
}
