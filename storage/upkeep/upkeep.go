// Package upkeep owns the blob tier's upkeep, what keeps the replicas the
// catalogue names whole once they are written: the repairer, which
// re-creates missing replicas by Algorithm 2 around the survivors, fewest
// left first, rate-limited per receiving server (repair.go); the scrubber,
// which reads every replica against its entry's block checksums and drops
// bad or missing ones for the repairer (scrub.go); the garbage collector,
// the only deleter of replicas an entry may once have named, which also
// expires the KV records that only answer retries (gc.go); the catalogue's
// rebuild from the storage nodes alone (rebuild.go); and the front's half
// of the maintainer, the one front at a time that runs all this
// (maintainer.go; the Consul lock that elects it is storage/blobd's).
//
// It works on the catalogue (storage/catalog), the node pool
// (storage/nodes) and Consul KV directly, and on the S3 front
// (storage/front) through Front: the buckets' policies, safe mode, the
// front's read path, which the scrubber's reads and a repair's sources go
// through, and the write path (storage/objects), which places a repair's
// copies and writes them. The front and the write path tell it what they
// see through KickRepair, HintGC, Suspect and AdjustObjects.
package upkeep

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// The reports' wire types are the API's (api/blob.go).
type (
	GCReport    = api.GCReport
	ScrubReport = api.ScrubReport
)

// Policy is what a bucket asks of placement: its tags over the default, as
// the front reads them (storage/front/policy.go).
type Policy struct {
	Replicas int  // replicas of each object
	Strict   bool // refuse a placement that cannot keep every diversity rule
}

// Front is what the upkeep needs of the S3 front it keeps
// (storage/front's Backend implements it).
type Front interface {
	// SafeMode is why safe mode holds the upkeep back ("" when it is off).
	SafeMode() string
	// Entries lists every object of every bucket, and each bucket's policy.
	Entries(ctx context.Context) ([]catalog.Entry, map[string]Policy, error)
	// BucketPolicy is one bucket's policy; an s3err.BucketError when the
	// bucket is gone.
	BucketPolicy(ctx context.Context, bucket string) (Policy, error)
	// Place picks nodes for the replicas e lacks under pol by Algorithm 2
	// around the nodes of existing, and reserves e.Size on them (given back
	// with nodes.Pool.Unreserve or kept with nodes.Pool.Commit).
	Place(e catalog.Entry, pol Policy, existing []string) (grid.Placement, error)
	// OpenObject opens e's bytes as a read does: checked block by block,
	// moving from replica to replica as they fail.
	OpenObject(ctx context.Context, e catalog.Entry) (io.ReadCloser, error)
	// OpenReplica opens the size bytes of one replica, unchecked, within
	// one of its node's slots and the node timeout.
	OpenReplica(ctx context.Context, r catalog.Replica, size int64) (io.ReadCloser, error)
	// WriteReplicas writes body, e's bytes, to every node under a new name
	// no other write uses (carrying e as metadata), and answers the name and
	// the bytes' MD5; on failure nothing stays behind.
	WriteReplicas(ctx context.Context, nodeIDs []string, e catalog.Entry, body io.Reader) (name string, md5 []byte, err error)
	// Regrid rebuilds the grid placement uses from the nodes' bytes held and
	// effective capacities.
	Regrid()
	// RepairRisks is, for each set of surviving replicas' nodes, the risk of
	// losing them (grid.Grid.RepairRisk), from one look at the grid.
	RepairRisks(survivors [][]string) []float64
	// AbortUpload aborts a multipart upload, as an S3 abort does.
	AbortUpload(ctx context.Context, bucket, key, id string) error
	// RestoreBuckets writes the bucket records a node mirrors that Consul KV
	// does not hold, and answers how many it wrote.
	RestoreBuckets(ctx context.Context, node *minio.Core) (int, error)
}

// Options configure an Upkeep.
type Options struct {
	KV      kv.KV
	Prefix  string // the Consul KV prefix as history.KeyPrefix gives it, e.g. "harvest/"
	Catalog *catalog.Store
	Nodes   *nodes.Pool
	Front   Front
	Log     hclog.Logger
	Metrics *Metrics
	// NamePrefix is the folder of the deployment's replicas on the nodes
	// (objects.ReplicaFolder): the only one the collector lists.
	NamePrefix string
	// CommitWindow is how long after its replicas are written a write may
	// still send its entry's check-and-set (objects.CommitWindow): a repair's
	// copies are named by their entry within it, or never.
	CommitWindow time.Duration
	Repair       RepairOptions
	GC           GCOptions
	Scrub        ScrubOptions
}

// Upkeep keeps one front's share of the tier: all of it while the front is
// the maintainer, its own reads' suspects and the repairer's recount while
// it stands by.
type Upkeep struct {
	log          hclog.Logger
	kv           kv.KV
	prefix       string
	namePrefix   string
	cat          *catalog.Store
	nodes        *nodes.Pool
	timeouts     nodes.Timeouts // the pool's
	commitWindow time.Duration
	front        Front
	metrics      *Metrics
	repair       *repairer
	gc           *collector
	scrub        *scrubber
	follower     atomic.Bool // another front maintains the tier (maintainer.go)
}

// New returns the upkeep of a front.
func New(o Options) *Upkeep {
	u := &Upkeep{log: o.Log, kv: o.KV, prefix: o.Prefix, namePrefix: o.NamePrefix, cat: o.Catalog, nodes: o.Nodes,
		timeouts: o.Nodes.Timeouts(), commitWindow: o.CommitWindow, front: o.Front, metrics: o.Metrics}
	u.repair = newRepairer(u, o.Repair)
	u.gc = newCollector(u, o.GC)
	u.scrub = newScrubber(u, o.Scrub)
	return u
}

// KickRepair calls for a full repair scan: a node was lost, a bucket's
// policy or the default changed, capacities changed.
func (u *Upkeep) KickRepair() { u.repair.kick() }

// HintGC says replicas were orphaned at t (an overwrite, a delete): a
// garbage collection pass is due one grace later.
func (u *Upkeep) HintGC(t time.Time) { u.gc.hint(t) }

// Suspect queues a replica a read found bad or missing for the scrubber.
func (u *Upkeep) Suspect(bucket, key string, r catalog.Replica) { u.scrub.suspect(bucket, key, r) }

// AdjustObjects keeps the object count current between scans (+1 a write
// of a new key, -1 a delete).
func (u *Upkeep) AdjustObjects(delta int) { u.repair.adjustObjects(delta) }

// RepairScan runs one full repair scan now: what every node holds is
// counted, the grid rebuilt and, on the maintainer, the objects short of
// replicas repaired (what Repair does at start, on a kick and every
// scan interval).
func (u *Upkeep) RepairScan(ctx context.Context) error { return u.repair.scan(ctx) }

// RetryRepairs retries now the objects the last repair pass left short,
// reading only their entries (what Repair does every interval between
// scans).
func (u *Upkeep) RetryRepairs(ctx context.Context) error { return u.repair.retry(ctx) }

// Status is the upkeep's part of the front's /v1/status: the counts of
// the last repair scan, what was re-created and how fast over the last ten
// minutes, the time left at that rate (or, when nothing was re-created
// lately, at the per-server limit of nodesUp servers), the last collector
// and scrubber reports, and whether this front is the maintainer.
func (u *Upkeep) Status(nodesUp int) api.BlobStatus {
	r := u.repair
	r.mu.Lock()
	st := r.status
	st.Repaired, st.LimitPerHour = r.total, r.opts.PerServerPerHour
	recent := 0
	for _, t := range r.done {
		if time.Since(t) <= rateWindow {
			recent++
		}
	}
	r.mu.Unlock()
	st.LastGC, st.LastScrub, st.Maintainer = u.LastGC(), u.LastScrub(), u.Maintainer()
	st.RepairRatePerHour = float64(recent) / rateWindow.Hours()
	if st.UnderReplicated > 0 {
		ratePerHour := st.RepairRatePerHour
		if ratePerHour == 0 {
			ratePerHour = st.LimitPerHour * float64(max(nodesUp, 1))
		}
		st.ETASeconds = float64(st.UnderReplicated) / ratePerHour * 3600
	}
	return st
}

// ScanPending reports whether something called for a full repair scan
// that the repair loop has not begun.
func (u *Upkeep) ScanPending() bool { return len(u.repair.kickCh) > 0 }

// Suspects is how many replicas a read found bad or missing wait for the
// scrubber.
func (u *Upkeep) Suspects() int { return len(u.scrub.queue) }

// SetRepairLimit changes how many replicas one server may receive from the
// repairer per hour (RepairOptions.PerServerPerHour); every server's
// allowance starts full again.
func (u *Upkeep) SetRepairLimit(perServerPerHour float64) {
	r := u.repair
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts.PerServerPerHour = perServerPerHour
	clear(r.limits)
}
