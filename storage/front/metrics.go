package front

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/observability/metricset"
	"github.com/harvest-platform/harvest/storage/upkeep"
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
	lost                prometheus.Counter
	declarationFailures prometheus.Counter
	nodeUp              *prometheus.GaugeVec
	ambiguousWrites     prometheus.Counter
	saturated           prometheus.Counter
	storageFull         prometheus.Counter
	corruptReads        prometheus.Counter
	missingReads        prometheus.Counter
	safeMode            prometheus.Gauge
	fronts              prometheus.Gauge
	nodeFree            *prometheus.GaugeVec
	firstByte           *prometheus.GaugeVec
	upkeep              *upkeep.Metrics // the repairer's, scrubber's, collector's and maintainer's
}

func newMetrics() *metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "harvest_blob_" + name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "harvest_blob_" + name, Help: help})
	}
	m := &metrics{
		registry:      prometheus.NewRegistry(),
		upkeep:        upkeep.NewMetrics(),
		writes:        counter("writes_total", "Objects written with every replica durable."),
		writeFailures: counter("write_failures_total", "Writes that failed or could not be confirmed (a storage node or the catalogue failed)."),
		degraded:      counter("degraded_placements_total", "Writes placed without every diversity rule."),
		reads:         counter("reads_total", "Object reads served."),
		busyDenials:   counter("busy_denials_total", "Replicas skipped by a read because their node was busy."),
		readFailures:  counter("read_failures_total", "Reads refused: every replica busy, down, bad or gone."),
		readRetries:   counter("read_retries_total", "Times a read found every replica failing for its node's trouble and waited to try them again from the same block."),
		lost:          counter("nodes_lost_total", "Storage nodes found reimaged (identity marker gone) or down too long."),
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
	m.safeMode = gauge("safe_mode", "1 while safe mode holds back forgetting replicas, repairs and the garbage collector.")
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
	reg.MustRegister(m.ambiguousWrites, m.saturated, m.storageFull, m.corruptReads, m.missingReads, m.safeMode, m.fronts,
		m.nodeFree, m.firstByte)
	reg.MustRegister(m.writes, m.writeFailures, m.degraded, m.reads, m.busyDenials, m.readFailures, m.readRetries, m.redirects,
		m.lost, m.declarationFailures, m.nodeUp,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	m.upkeep.Register(reg)
}

// MetricNames are the series the blob front serves at /v1/metrics (its
// harvest_blob_*, the upkeep's among them, with the Go and process
// collectors' go_* and process_*), named from the collectors newMetrics
// builds (observability's test checks the dashboard and the alerts against
// them).
func MetricNames() []string {
	rec := metricset.NewRecorder()
	newMetrics().register(rec)
	return rec.Names()
}

// Registry is where the front's metrics are registered (served at /v1/metrics).
func (b *Backend) Registry() *prometheus.Registry { return b.metrics.registry }
