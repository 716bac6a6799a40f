package upkeep

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the upkeep's Prometheus metrics, served with the front's
// (storage/front/metrics.go registers them beside its own).
type Metrics struct {
	underReplicated   prometheus.Gauge
	objects           prometheus.Gauge
	repaired          prometheus.Counter
	repairBytes       prometheus.Counter
	repairFailures    prometheus.Counter
	scrubbedBytes     prometheus.Counter
	scrubbedReplicas  prometheus.Counter
	scrubCorrupt      prometheus.Counter
	scrubMissing      prometheus.Counter
	scrubPasses       prometheus.Counter
	repairVerifyFails prometheus.Counter
	gcDeleted         prometheus.Counter
	gcDeletedBytes    prometheus.Counter
	gcAbortedUploads  prometheus.Counter
	gcPasses          prometheus.Counter
	gcHeld            prometheus.Counter
	orphanBytes       prometheus.Gauge
	maintainer        prometheus.Gauge
}

// NewMetrics builds the upkeep's metrics (registered nowhere yet).
func NewMetrics() *Metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "harvest_blob_" + name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "harvest_blob_" + name, Help: help})
	}
	m := &Metrics{
		underReplicated: gauge("under_replicated_objects", "Objects with fewer live replicas than their replication factor."),
		objects:         gauge("objects", "Objects in the catalogue at the last repair scan."),
		repaired:        counter("repaired_replicas_total", "Replicas re-created by the repairer."),
		repairBytes:     counter("repaired_bytes_total", "Bytes copied by the repairer."),
		repairFailures:  counter("repair_failures_total", "Replica re-creations that failed (retried on the next scan)."),
	}
	m.scrubbedBytes = counter("scrubbed_bytes_total", "Bytes of replicas the scrubber read and checked.")
	m.scrubbedReplicas = counter("scrubbed_replicas_total", "Replicas the scrubber checked.")
	m.scrubCorrupt = counter("scrub_corrupt_replicas_total", "Replicas the scrubber found failing their checksums and dropped for repair.")
	m.scrubMissing = counter("scrub_missing_replicas_total", "Replicas the scrubber found missing on a live node and dropped for repair.")
	m.scrubPasses = counter("scrub_passes_total", "Scrubber passes over the whole catalogue.")
	m.repairVerifyFails = counter("repair_verify_failures_total", "Repairs given up because the source or the new copy failed its checksums.")
	m.gcDeleted = counter("gc_deleted_replicas_total", "Replicas no catalogue entry reached, deleted by the garbage collector after the grace period.")
	m.gcDeletedBytes = counter("gc_deleted_bytes_total", "Bytes of the replicas the garbage collector deleted.")
	m.gcAbortedUploads = counter("gc_expired_uploads_total", "Multipart uploads left open beyond upload_expiry that the garbage collector aborted.")
	m.gcPasses = counter("gc_passes_total", "Garbage collector passes.")
	m.gcHeld = counter("gc_held_total", "Garbage collector passes that deleted nothing because the catalogue looked lost or safe mode was on.")
	m.orphanBytes = gauge("orphan_bytes", "Bytes of replicas no entry reaches, on all nodes, at the last GC pass (deleted once older than the grace).")
	m.maintainer = gauge("maintainer", "1 while this front maintains the tier (forgetting lost nodes, repairs, scrubs, garbage collection); 0 while it stands by.")
	m.maintainer.Set(1)
	return m
}

// Register registers the metrics in reg.
func (m *Metrics) Register(reg prometheus.Registerer) {
	reg.MustRegister(m.scrubbedBytes, m.scrubbedReplicas, m.scrubCorrupt, m.scrubMissing, m.scrubPasses, m.repairVerifyFails,
		m.gcDeleted, m.gcDeletedBytes, m.gcAbortedUploads, m.gcPasses, m.gcHeld, m.orphanBytes, m.maintainer)
	reg.MustRegister(m.underReplicated, m.objects, m.repaired, m.repairBytes, m.repairFailures)
}
