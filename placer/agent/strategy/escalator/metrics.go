package escalator

import "github.com/prometheus/client_golang/prometheus"

// Metrics are placement escalation's Prometheus metrics.
type Metrics struct {
	escalations *prometheus.CounterVec
}

// NewMetrics registers escalation's metrics in reg (whether escalation is
// on or not: the placer serves them either way).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		escalations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_placer_escalations_total", Help: "Placement escalations of blocked harvested jobs, by step.",
		}, []string{"step"}),
	}
	reg.MustRegister(m.escalations)
	return m
}
