package front

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the blob front's Prometheus metrics.
type metrics struct {
	registry            *prometheus.Registry
	writes              prometheus.Counter
	writeFailures       prometheus.Counter
	degraded            prometheus.Counter
	reads               prometheus.Counter
	busyDenials         prometheus.Counter
	readFailures        prometheus.Counter
	underReplicated     prometheus.Gauge
	objects             prometheus.Gauge
	repaired            prometheus.Counter
	repairBytes         prometheus.Counter
	repairFailures      prometheus.Counter
	lost                prometheus.Counter
	declarationFailures prometheus.Counter
	nodeUp              *prometheus.GaugeVec
}

func newMetrics() *metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "harvest_blob_" + name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "harvest_blob_" + name, Help: help})
	}
	m := &metrics{
		registry:        prometheus.NewRegistry(),
		writes:          counter("writes_total", "Objects written with every replica durable."),
		writeFailures:   counter("write_failures_total", "Writes refused because a storage node failed."),
		degraded:        counter("degraded_placements_total", "Writes placed without every diversity rule."),
		reads:           counter("reads_total", "Object reads served."),
		busyDenials:     counter("busy_denials_total", "Replicas skipped by a read because their node was busy."),
		readFailures:    counter("read_failures_total", "Reads refused with SlowDown: every replica busy or gone."),
		underReplicated: gauge("under_replicated_objects", "Objects with fewer live replicas than their replication factor."),
		objects:         gauge("objects", "Objects in the catalogue at the last repair scan."),
		repaired:        counter("repaired_replicas_total", "Replicas re-created by the repairer."),
		repairBytes:     counter("repaired_bytes_total", "Bytes copied by the repairer."),
		repairFailures:  counter("repair_failures_total", "Replica re-creations that failed (retried on the next scan)."),
		lost:            counter("nodes_lost_total", "Storage nodes found reimaged (identity marker gone) or down too long."),
		declarationFailures: counter("declaration_read_failures_total",
			"Reads of the declarations (policy document, tenant declarations) that failed or found a corrupt document; the last good values stay."),
		nodeUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "harvest_blob_node_up",
			Help: "1 when the storage node answers with its identity marker."}, []string{"node"}),
	}
	m.registry.MustRegister(m.writes, m.writeFailures, m.degraded, m.reads, m.busyDenials, m.readFailures,
		m.underReplicated, m.objects, m.repaired, m.repairBytes, m.repairFailures, m.lost, m.declarationFailures, m.nodeUp,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Registry is where the front's metrics are registered (served at /v1/metrics).
func (b *Backend) Registry() *prometheus.Registry { return b.metrics.registry }
