// Package health is the blob front's watch over its storage nodes: the
// health checks that read each node's identity marker and tell a node up,
// down, lost, reimaged, misconfigured or joining, give a joining node its
// marker and drop a lost or reimaged node's replicas from the catalogue for
// the repairer (health.go); safe mode, which holds that back when too many
// nodes look gone at once (safemode.go); and the ledgers through which the
// fronts serving the tier count each other's writes, shared at every check
// (ledger.go).
//
// It works on the node pool (storage/nodes), the catalogue
// (storage/catalog) and Consul KV directly; it keeps the write path's grid
// (storage/objects) in step with the nodes it finds up or down, leaves
// what only the maintainer may do to the upkeep's switch (storage/upkeep),
// and reaches the S3 front (storage/front) through Front for what the
// front keeps: the buckets.
package health

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/minio/minio-go/v7"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/objects"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// Front is what the health checks need of the S3 front they watch for
// (storage/front's Backend provides it).
type Front interface {
	// Entries lists every object of every bucket (a lost node's replicas
	// are dropped from them).
	Entries(ctx context.Context) ([]catalog.Entry, error)
	// MirrorBuckets writes every bucket record onto a node that joins.
	MirrorBuckets(ctx context.Context, node *minio.Core) error
}

// Metrics are the front's gauges and counters the health checks set
// (storage/front/metrics.go builds and registers them).
type Metrics struct {
	SafeMode prometheus.Gauge     // harvest_blob_safe_mode
	Lost     prometheus.Counter   // harvest_blob_nodes_lost_total
	NodeUp   *prometheus.GaugeVec // harvest_blob_node_up
	NodeFree *prometheus.GaugeVec // harvest_blob_node_disk_free_bytes
	Fronts   prometheus.Gauge     // harvest_blob_fronts
}

// Options configure a Checker.
type Options struct {
	KV       kv.KV
	Prefix   string // the Consul KV prefix as history.KeyPrefix gives it, e.g. "harvest/"
	Catalog  *catalog.Store
	Nodes    *nodes.Pool
	Objects  *objects.Writer
	Upkeep   *upkeep.Upkeep
	Front    Front
	Log      hclog.Logger
	Metrics  Metrics
	SafeMode SafeModeOptions
}

// Checker checks one front's storage nodes.
type Checker struct {
	log        hclog.Logger
	kv         kv.KV
	prefix     string
	cat        *catalog.Store
	nodes      *nodes.Pool
	timeouts   nodes.Timeouts // the pool's
	objects    *objects.Writer
	upkeep     *upkeep.Upkeep
	front      Front
	metrics    Metrics
	safe       *safeMode
	diskClient *http.Client    // reads the nodes' drive metrics
	episodes   sync.Map        // failures in an episode already logged (warnEpisode)
	lostNodes  map[string]bool // nodes whose replicas were dropped; only the health checks touch it
	frontID    string          // this front's ledger among the fronts' (ledger.go), new at every start
	frontsSeen atomic.Int64    // fronts serving at the last health check (ledger.go)
}

// New returns the health checks of a front.
func New(o Options) *Checker {
	h := &Checker{log: o.Log, kv: o.KV, prefix: o.Prefix, cat: o.Catalog, nodes: o.Nodes, timeouts: o.Nodes.Timeouts(),
		objects: o.Objects, upkeep: o.Upkeep, front: o.Front, metrics: o.Metrics, safe: newSafeMode(o.SafeMode),
		diskClient: &http.Client{Transport: nodes.Transport(o.Nodes.Timeouts().Node)},
		lostNodes:  map[string]bool{}, frontID: newFrontID()}
	h.frontsSeen.Store(1)
	return h
}
