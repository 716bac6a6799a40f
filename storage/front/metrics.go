package front

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/observability/metricset"
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
	readRetries         prometheus.Counter
	redirects           prometheus.Counter
	underReplicated     prometheus.Gauge
	objects             prometheus.Gauge
	repaired            prometheus.Counter
	repairBytes         prometheus.Counter
	repairFailures      prometheus.Counter
	lost                prometheus.Counter
	declarationFailures prometheus.Counter
	nodeUp              *prometheus.GaugeVec
	ambiguousWrites     prometheus.Counter
	saturated           prometheus.Counter
	storageFull         prometheus.Counter
	corruptReads        prometheus.Counter
	missingReads        prometheus.Counter
	scrubbedBytes       prometheus.Counter
	scrubbedReplicas    prometheus.Counter
	scrubCorrupt        prometheus.Counter
	scrubMissing        prometheus.Counter
	scrubPasses         prometheus.Counter
	repairVerifyFails   prometheus.Counter
	gcDeleted           prometheus.Counter
	gcDeletedBytes      prometheus.Counter
	gcAbortedUploads    prometheus.Counter
	gcPasses            prometheus.Counter
	gcHeld              prometheus.Counter
	orphanBytes         prometheus.Gauge
	safeMode            prometheus.Gauge
	maintainer          prometheus.Gauge
	fronts              prometheus.Gauge
	nodeFree            *prometheus.GaugeVec
	firstByte           *prometheus.GaugeVec
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
		writeFailures:   counter("write_failures_total", "Writes that failed or could not be confirmed (a storage node or the catalogue failed)."),
		degraded:        counter("degraded_placements_total", "Writes placed without every diversity rule."),
		reads:           counter("reads_total", "Object reads served."),
		busyDenials:     counter("busy_denials_total", "Replicas skipped by a read because their node was busy."),
		readFailures:    counter("read_failures_total", "Reads refused: every replica busy, down, bad or gone."),
		readRetries:     counter("read_retries_total", "Times a read found every replica failing for its node's trouble and waited to try them again from the same block."),
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
	m.redirects = counter("read_redirects_total", "GETs answered with a redirect to a presigned URL on a replica (buckets tagged harvest-read=redirect).")
	m.ambiguousWrites = counter("unconfirmed_catalogue_writes_total", "Catalogue writes whose answer was lost (an error after the request was sent); settled by reading back, else left to the GC.")
	m.saturated = counter("node_saturated_total", "Requests refused with SlowDown because a storage node had no free call slot in time.")
	m.storageFull = counter("storage_full_total", "Writes and parts refused with XMinioStorageFull: no nodes with room within their capacity and free disk.")
	m.corruptReads = counter("corrupt_replica_reads_total", "Replicas a read found failing their block checksums (skipped, queued for the scrubber).")
	m.missingReads = counter("missing_replica_reads_total", "Replicas a read found missing on their node (skipped, queued for the scrubber).")
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
	m.safeMode = gauge("safe_mode", "1 while safe mode holds back forgetting replicas, repairs and the garbage collector.")
	m.maintainer = gauge("maintainer", "1 while this front maintains the tier (forgetting lost nodes, repairs, scrubs, garbage collection); 0 while it stands by.")
	m.maintainer.Set(1)
	m.fronts = gauge("fronts", "Fronts serving the tier (their shared ledgers written within the last minute) at the last health check, this one included.")
	m.fronts.Set(1)
	m.nodeFree = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "harvest_blob_node_disk_free_bytes",
		Help: "A storage node's free disk at its last reading (MinIO's drive metrics); -1 when it cannot be read."}, []string{"node"})
	m.firstByte = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "harvest_blob_node_first_byte_seconds",
		Help: "A storage node's recent time to first byte for this front's reads: the peak EWMA (decay 10 s) reads are ordered by, with the reads in flight."}, []string{"node"})
	m.register(m.registry)
	return m
}

func (m *metrics) register(reg prometheus.Registerer) {
	reg.MustRegister(m.ambiguousWrites, m.saturated, m.storageFull, m.corruptReads, m.missingReads, m.scrubbedBytes,
		m.scrubbedReplicas, m.scrubCorrupt, m.scrubMissing, m.scrubPasses, m.repairVerifyFails, m.gcDeleted, m.gcDeletedBytes,
		m.gcAbortedUploads, m.gcPasses, m.gcHeld, m.orphanBytes, m.safeMode, m.maintainer, m.fronts, m.nodeFree, m.firstByte)
	reg.MustRegister(m.writes, m.writeFailures, m.degraded, m.reads, m.busyDenials, m.readFailures, m.readRetries, m.redirects,
		m.underReplicated, m.objects, m.repaired, m.repairBytes, m.repairFailures, m.lost, m.declarationFailures, m.nodeUp,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
}

// MetricNames are the series the blob front serves at /v1/metrics (its
// harvest_blob_*, with the Go and process collectors' go_* and process_*),
// named from the collectors newMetrics builds (observability's test checks
// the dashboard and the alerts against them).
func MetricNames() []string {
	rec := metricset.NewRecorder()
	newMetrics().register(rec)
	return rec.Names()
}

// Registry is where the front's metrics are registered (served at /v1/metrics).
func (b *Backend) Registry() *prometheus.Registry { return b.metrics.registry }
