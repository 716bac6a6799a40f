// Package objects is the blob tier's write path: how an object's replicas
// are placed (Algorithm 2 on the grid, storage/grid, which it keeps),
// streamed once to every node and checked (store.go), and made visible at
// one check-and-set of their catalogue entry, or deleted or given new
// metadata the same way (commit.go); and the multipart machinery: the
// upload, part and finished records, the claims and the transactions that
// complete or abort an upload (multipart.go, uploads.go, complete.go). No
// path here deletes a replica an entry may name: that is the garbage
// collector's (storage/upkeep).
//
// The S3 front (storage/front) calls it for PutObject, CopyObject,
// DeleteObject(s) and the multipart requests, and hands its answers on: the
// errors it returns are S3 errors already (s3err.APIError) or failures the
// front turns into them. The upkeep (storage/upkeep) reaches it through the
// front's upkeep.Front: a repair's placement and copies, the grid's repair
// risks, the collector's abort of an upload left open.
package objects

import (
	"context"
	crand "crypto/rand"
	"io"
	"math/rand/v2"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// Policy is what a bucket asks of placement: its replicas, and whether a
// placement that cannot keep every diversity rule is refused (the
// repairer places by the same, hence upkeep's type).
type Policy = upkeep.Policy

// Metrics are the front's counters the write path adds to
// (storage/front/metrics.go builds and registers them).
type Metrics struct {
	Writes          prometheus.Counter // harvest_blob_writes_total
	WriteFailures   prometheus.Counter // harvest_blob_write_failures_total
	Degraded        prometheus.Counter // harvest_blob_degraded_placements_total
	StorageFull     prometheus.Counter // harvest_blob_storage_full_total
	AmbiguousWrites prometheus.Counter // harvest_blob_unconfirmed_catalogue_writes_total
}

// Options configure a Writer.
type Options struct {
	KV      kv.KV
	Prefix  string // the Consul KV prefix as history.KeyPrefix gives it, e.g. "harvest/"
	Catalog *catalog.Store
	Nodes   *nodes.Pool
	// Upkeep hears of replicas orphaned (HintGC) and keys added or
	// deleted (AdjustObjects).
	Upkeep  *upkeep.Upkeep
	Log     hclog.Logger
	Metrics Metrics
	Seed    uint64 // of the placement's random draws
	// Missing is the error for a key or an upload bucket does not hold:
	// notFound, or the bucket's own error (NoSuchBucket) when it is gone
	// too. The front, which keeps the bucket records, answers it.
	Missing func(ctx context.Context, bucket string, notFound error) error
}

// randRead draws the nonces of replica names, version IDs, upload IDs
// and claims.
var randRead = crand.Read

// Writer is one front's write path.
type Writer struct {
	log        hclog.Logger
	kv         kv.KV
	prefix     string
	namePrefix string // the deployment's folder of replicas on the nodes
	cat        *catalog.Store
	nodes      *nodes.Pool
	timeouts   nodes.Timeouts // the pool's
	upkeep     *upkeep.Upkeep
	metrics    Metrics
	missing    func(ctx context.Context, bucket string, notFound error) error

	mu   sync.Mutex // guards the grid and rng
	grid *grid.Grid
	rng  *rand.Rand

	degradedSeen sync.Map // reasons of degraded placements logged at WARN
}

// New returns the write path over the given nodes.
func New(o Options) *Writer {
	w := &Writer{log: o.Log, kv: o.KV, prefix: o.Prefix, namePrefix: namePrefixFor(o.Prefix), cat: o.Catalog,
		nodes: o.Nodes, timeouts: o.Nodes.Timeouts(), upkeep: o.Upkeep, metrics: o.Metrics, missing: o.Missing,
		rng: rand.New(rand.NewPCG(o.Seed, 99))}
	w.grid = o.Nodes.Grid()
	return w
}

// MarkInGrid keeps a node's standing in the grid: busy or down nodes take
// no new replicas.
func (w *Writer) MarkInGrid(id string) {
	busy := w.nodes.Busy(id) || !w.nodes.Up(id)
	w.mu.Lock()
	defer w.mu.Unlock()
	if n, ok := w.grid.Node(id); ok {
		n.Busy = busy
	}
}

// WithGrid calls fn with the grid placement uses now, under the grid's
// lock (fn must not keep it beyond the call, nor call the Writer).
func (w *Writer) WithGrid(fn func(g *grid.Grid)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(w.grid)
}

// Grid is the grid placement uses now; a Regrid replaces it, so a caller
// holding it reads one look at the grid.
func (w *Writer) Grid() *grid.Grid {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.grid
}

// WriteReplicas writes body, e's bytes, to every node under a new name no
// other write uses (carrying e as metadata), and answers the name and the
// bytes' MD5; on failure nothing stays behind (a repair's copies).
func (w *Writer) WriteReplicas(ctx context.Context, nodeIDs []string, e catalog.Entry, body io.Reader) (string, []byte, error) {
	name := w.replicaName(e.Bucket, e.Key)
	res, err := w.putReplicas(ctx, nodeIDs, name, body, e)
	return name, res.md5, err
}
