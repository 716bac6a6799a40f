// Package front is the blob tier's S3 front: a versitygw backend (the S3
// protocol, SigV4, streaming payloads, ranges are versitygw's) whose objects
// live as replicas on the MinIO servers of harvested nodes, placed by
// Algorithm 2 (storage/grid), with the catalogue (storage/catalog) as the
// source of truth clients see. It is the S3 adapter: it owns the buckets
// and their policies (backend.go, policy.go, declared.go), each request's
// context and deadlines (request.go), the S3 errors it answers (errors.go),
// the answers themselves and checked reads (get.go, redirect.go,
// prefetch.go). Its writes go through the write path, a
// storage/objects.Writer: placement, the replicas, the one check-and-set per
// version, deletes, and the multipart records, claims and transactions. The
// storage nodes, with their clients, capacity accounting, per-node limits
// and read choice, are a storage/nodes.Pool, which a storage/health.Checker
// watches: health checks, safe mode and the ledgers shared with the other
// fronts (it reaches the buckets through health.go). Its upkeep (the garbage
// collector that alone deletes replicas an entry may have named, the
// scrubber, repair, the catalogue's rebuild and the maintainer's part of
// them) is a storage/upkeep.Upkeep, which reaches the read and write paths
// through upkeep.go.
package front

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"sort"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/hashicorp/go-hclog"
	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/periodic"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/health"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/objects"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// DataBucket is the bucket every storage node keeps replicas in.
const DataBucket = nodes.DataBucket

// Backend serves S3 requests from the harvested storage nodes.
type Backend struct {
	backend.BackendUnsupported
	log      hclog.Logger
	kv       kv.KV
	prefix   string
	cat      *catalog.Store
	nodes    *nodes.Pool
	timeouts nodes.Timeouts           // the pool's
	config   policy                   // the front's replicas and strict
	defaults atomic.Pointer[defaults] // of buckets without policy tags: the policy document's over config (declared.go)
	decl     *declarations

	objects    *objects.Writer // the write path
	health     *health.Checker // the nodes' health checks, safe mode, the ledgers
	metrics    *metrics
	upkeep     *upkeep.Upkeep
	busyExpiry time.Duration
}

var _ backend.Backend = (*Backend)(nil)

// Options configure a Backend.
type Options struct {
	KV       kv.KV
	Prefix   string // Consul KV prefix, e.g. "harvest/"
	Nodes    *nodes.Pool
	Replicas int  // default 3; the policy document's replicas win (declared.go)
	Strict   bool // refuse writes that cannot keep every diversity rule; the policy document's diversity wins
	Log      hclog.Logger
	Seed     uint64
	Repair   upkeep.RepairOptions
	GC       upkeep.GCOptions
	Scrub    upkeep.ScrubOptions
	SafeMode health.SafeModeOptions
	// BusyExpiry is how old a busy flag may be and still count (default
	// contract.BusyFlagMaxAge, the age the placer and harvestctl use too).
	BusyExpiry time.Duration
}

// New returns a backend over the given nodes.
func New(o Options) *Backend {
	if o.Replicas == 0 {
		o.Replicas = 3
	}
	if o.BusyExpiry <= 0 {
		o.BusyExpiry = contract.BusyFlagMaxAge
	}
	b := &Backend{log: o.Log, kv: o.KV, prefix: history.KeyPrefix(o.Prefix), cat: catalog.NewStore(o.KV, o.Prefix), nodes: o.Nodes, timeouts: o.Nodes.Timeouts(),
		busyExpiry: o.BusyExpiry,
		config:     policy{replicas: o.Replicas, strict: o.Strict}, decl: &declarations{store: history.NewStore(o.KV, o.Prefix)},
		metrics: newMetrics()}
	b.defaults.Store(ptr(b.config.over(nil)))
	b.upkeep = upkeep.New(upkeep.Options{KV: o.KV, Prefix: b.prefix, Catalog: b.cat, Nodes: o.Nodes, Front: upkeepFront{b}, Log: o.Log,
		Metrics: b.metrics.upkeep, NamePrefix: objects.ReplicaFolder(o.Prefix), CommitWindow: objects.CommitWindow(b.timeouts.Consul),
		Repair: o.Repair, GC: o.GC, Scrub: o.Scrub})
	m := b.metrics
	b.objects = objects.New(objects.Options{KV: o.KV, Prefix: b.prefix, Catalog: b.cat, Nodes: o.Nodes, Upkeep: b.upkeep, Log: o.Log,
		Metrics: objects.Metrics{Writes: m.writes, WriteFailures: m.writeFailures, Degraded: m.degraded, StorageFull: m.storageFull,
			AmbiguousWrites: m.ambiguousWrites},
		Seed: o.Seed, Missing: b.missing})
	b.health = health.New(health.Options{KV: o.KV, Prefix: b.prefix, Catalog: b.cat, Nodes: o.Nodes, Objects: b.objects, Upkeep: b.upkeep,
		Front: healthFront{b}, Log: o.Log, SafeMode: o.SafeMode,
		Metrics: health.Metrics{SafeMode: m.safeMode, Lost: m.lost, NodeUp: m.nodeUp, NodeFree: m.nodeFree, Fronts: m.fronts}})
	o.Nodes.OnFirstByte(func(node string, secs float64) { b.metrics.firstByte.WithLabelValues(node).Set(secs) })
	return b
}

func (b *Backend) String() string { return "harvest" }

// Upkeep is the front's upkeep: the repairer, scrubber and garbage
// collector to run, the rebuild, the maintainer's switch.
func (b *Backend) Upkeep() *upkeep.Upkeep { return b.upkeep }

// Objects is the front's write path (storage/objects): RecountUploads at
// start.
func (b *Backend) Objects() *objects.Writer { return b.objects }

// Health is the front's watch over its nodes (storage/health): the health
// checks to run, safe mode's confirmation.
func (b *Backend) Health() *health.Checker { return b.health }

// bucketPrefix is where every node mirrors the bucket records, beside its
// identity marker (health.MarkerObject), so the catalogue can be rebuilt
// from the nodes.
const bucketPrefix = ".harvest/buckets/"

// bucketInfo is a bucket's record in Consul KV.
type bucketInfo struct {
	Name    string            `json:"name"`
	Created time.Time         `json:"created"`
	ACL     []byte            `json:"acl"`
	Tags    map[string]string `json:"tags,omitempty"` // the bucket's policy among them (policy.go)
}

func (b *Backend) bucketKey(name string) string {
	return b.prefix + "blob/buckets/" + url.PathEscape(name)
}

func (b *Backend) bucket(ctx context.Context, name string) (*bucketInfo, error) {
	data, index, err := b.kv.Get(ctx, b.bucketKey(name))
	if err != nil {
		return nil, err
	}
	if index == 0 {
		return nil, s3err.GetBucketErr(s3err.ErrNoSuchBucket, name)
	}
	var info bucketInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, &history.CorruptError{Key: b.bucketKey(name), Err: err}
	}
	return &info, nil
}

func (b *Backend) CreateBucket(ctx context.Context, in *s3.CreateBucketInput, defaultACL []byte) error {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	name := *in.Bucket
	data, _ := json.Marshal(bucketInfo{Name: name, Created: time.Now().UTC(), ACL: defaultACL})
	ok, err := b.kv.CAS(ctx, b.bucketKey(name), data, 0)
	if err != nil {
		return err
	}
	if !ok {
		return s3err.GetAPIError(s3err.ErrBucketAlreadyOwnedByYou)
	}
	b.mirrorBucket(ctx, name, data)
	return nil
}

// mirrorBucket copies a bucket record to every node that is up (nil data
// removes it), so the catalogue can be rebuilt from the nodes; a node that
// misses it gets it when it (re)joins.
func (b *Backend) mirrorBucket(ctx context.Context, name string, data []byte) {
	for _, n := range b.nodes.List() {
		if !b.nodes.Up(n.ID) {
			continue
		}
		c := b.nodes.Client(n.ID)
		var err error
		if data == nil {
			err = c.RemoveObject(ctx, DataBucket, bucketPrefix+name, minio.RemoveObjectOptions{})
		} else {
			err = nodes.PutSmall(ctx, c, bucketPrefix+name, data)
		}
		if err != nil {
			b.log.Warn("mirroring a bucket record failed", "node", n.ID, "bucket", name, "error", err)
		}
	}
}

// mirrorBuckets writes every bucket record onto a node (one that joins,
// storage/health).
func (b *Backend) mirrorBuckets(ctx context.Context, c *minio.Core) error {
	pairs, err := b.kv.List(ctx, b.prefix+"blob/buckets/")
	if err != nil {
		return err
	}
	for _, p := range pairs {
		var info bucketInfo
		if json.Unmarshal(p.Value, &info) == nil {
			if err := nodes.PutSmall(ctx, c, bucketPrefix+info.Name, p.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// restoreBuckets writes the bucket records a node mirrors that Consul KV
// does not hold (a rebuild of the catalogue, storage/upkeep/rebuild.go),
// and answers how many it wrote.
func (b *Backend) restoreBuckets(ctx context.Context, c *minio.Core) (int, error) {
	restored := 0
	for info := range c.Client.ListObjects(ctx, DataBucket, minio.ListObjectsOptions{Prefix: bucketPrefix, Recursive: true}) {
		if info.Err != nil {
			return restored, info.Err
		}
		body, _, _, err := c.GetObject(ctx, DataBucket, info.Key, minio.GetObjectOptions{})
		if err != nil {
			return restored, err
		}
		data, err := io.ReadAll(io.LimitReader(body, 1<<20))
		body.Close()
		var rec bucketInfo
		if err != nil || json.Unmarshal(data, &rec) != nil || rec.Name == "" {
			continue
		}
		if ok, err := b.kv.CAS(ctx, b.bucketKey(rec.Name), data, 0); err != nil {
			return restored, err
		} else if ok {
			restored++
		}
	}
	return restored, nil
}

func (b *Backend) HeadBucket(ctx context.Context, in *s3.HeadBucketInput) (*s3.HeadBucketOutput, error) {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	if _, err := b.bucket(ctx, *in.Bucket); err != nil {
		return nil, err
	}
	return &s3.HeadBucketOutput{}, nil
}

func (b *Backend) GetBucketAcl(parent context.Context, in *s3.GetBucketAclInput) ([]byte, error) {
	b.readEntryAhead(parent, *in.Bucket) // prefetch.go
	req := b.request(parent)             // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx := req.ctx
	info, err := b.bucket(ctx, *in.Bucket)
	if err != nil {
		return nil, err
	}
	rememberBucket(parent, info)
	return info.ACL, nil
}

func (b *Backend) PutBucketAcl(ctx context.Context, bucket string, acl []byte) error {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	return b.updateBucket(ctx, bucket, func(info *bucketInfo) { info.ACL = acl })
}

func (b *Backend) DeleteBucket(ctx context.Context, bucket string) error {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	if _, err := b.bucket(ctx, bucket); err != nil {
		return err
	}
	if keys, err := b.cat.Keys(ctx, bucket, "", ""); err != nil {
		return err
	} else if len(keys) > 0 {
		return s3err.GetBucketErr(s3err.ErrBucketNotEmpty, bucket)
	}
	if err := b.kv.Delete(ctx, b.bucketKey(bucket)); err != nil {
		return err
	}
	b.mirrorBucket(ctx, bucket, nil)
	return nil
}

func (b *Backend) ListBuckets(ctx context.Context, in s3response.ListBucketsInput) (s3response.ListAllMyBucketsResult, error) {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	pairs, err := b.kv.List(ctx, b.prefix+"blob/buckets/")
	if err != nil {
		return s3response.ListAllMyBucketsResult{}, err
	}
	out := s3response.ListAllMyBucketsResult{Owner: s3response.CanonicalUser{ID: in.Owner}}
	for _, p := range pairs {
		var info bucketInfo
		if err := json.Unmarshal(p.Value, &info); err != nil {
			return out, &history.CorruptError{Key: p.Key, Err: err}
		}
		out.Buckets.Bucket = append(out.Buckets.Bucket, s3response.ListAllMyBucketsEntry{Name: info.Name, CreationDate: info.Created})
	}
	sort.Slice(out.Buckets.Bucket, func(i, j int) bool { return out.Buckets.Bucket[i].Name < out.Buckets.Bucket[j].Name })
	return out, nil
}

// The configuration getters answer "not configured": the gateway asks for
// them on every write, and NotImplemented would fail the write.
func (b *Backend) GetBucketPolicy(_ context.Context, bucket string) ([]byte, error) {
	return nil, s3err.GetBucketErr(s3err.ErrNoSuchBucketPolicy, bucket)
}
func (b *Backend) GetBucketCors(_ context.Context, bucket string) ([]byte, error) {
	return nil, s3err.GetBucketErr(s3err.ErrNoSuchCORSConfiguration, bucket)
}
func (b *Backend) GetObjectLockConfiguration(_ context.Context, bucket string) ([]byte, error) {
	return nil, s3err.GetBucketErr(s3err.ErrObjectLockConfigurationNotFound, bucket)
}
func (b *Backend) GetBucketOwnershipControls(_ context.Context, bucket string) (types.ObjectOwnership, error) {
	return types.ObjectOwnershipBucketOwnerEnforced, s3err.GetBucketErr(s3err.ErrOwnershipControlsNotFound, bucket)
}

// FollowBusy keeps the nodes' busy flags current (the harvest driver writes
// them) and marks busy nodes in the grid, so they get no new replicas.
func (b *Backend) FollowBusy(ctx context.Context, every time.Duration) {
	periodic.Every(ctx, every, func(ctx context.Context) error {
		changed, err := b.nodes.RefreshBusy(ctx, b.kv, b.prefix, b.busyExpiry)
		if len(changed) > 0 {
			for _, id := range changed {
				b.objects.MarkInGrid(id)
			}
			b.log.Info("busy flags changed", "nodes", changed)
		}
		return err
	}, func(err error) { b.log.Warn("reading busy flags failed", "error", err) })
}
