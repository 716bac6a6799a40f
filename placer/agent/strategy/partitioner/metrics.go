package partitioner

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the short-job partition's Prometheus metrics.
type Metrics struct {
	cutoff    prometheus.Gauge
	partition prometheus.Gauge
}

// NewMetrics registers the partition's metrics in reg (whether the
// partition is on or not: the placer serves them either way).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		cutoff: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_partition_cutoff_seconds", Help: "The short/long job cutoff.",
		}),
		partition: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "harvest_placer_partition_nodes", Help: "Nodes on the short-job partition.",
		}),
	}
	reg.MustRegister(m.cutoff, m.partition)
	return m
}
