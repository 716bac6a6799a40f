package greylister

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/placer/greylist"
)

// Metrics are greylisting's Prometheus metrics.
type Metrics struct {
	failures   *prometheus.CounterVec
	greylisted prometheus.Gauge
}

// NewMetrics registers greylisting's metrics in reg (whether greylisting
// is on or not: the placer serves them either way).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_placer_allocation_failures_total", Help: "Failed harvested allocations, by kind (only \"node\" counts toward greylisting).",
		}, []string{"kind"}),
		greylisted: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_greylisted_nodes", Help: "Nodes greylisted now.",
		}),
	}
	reg.MustRegister(m.failures, m.greylisted)
	return m
}

func (m *Metrics) failure(kind greylist.FailureKind) {
	m.failures.WithLabelValues(string(kind)).Inc()
}
