package upkeep

// The garbage collector is the only deleter of replicas an entry may once
// have named. A pass lists each live node's replicas (the deployment's
// folder only) and incomplete uploads first, then reads the whole
// catalogue and every upload record: whatever was committed before that
// read is seen. A replica no entry names on that node, and no open upload
// names, is deleted once it is older than the grace period (longer than
// any write or claim takes, so a write in flight is never collected); a
// node upload no upload record names is aborted after the grace too. It
// holds back entirely in safe mode, and when the catalogue lists neither
// an object nor a delete while the nodes hold old replicas (a lost
// catalogue wants a rebuild, not a collection). It also expires the KV records that only answer retries:
// finished uploads, tombstones, parts of ended uploads, and aborts uploads
// left open longer than upload_expiry.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// GCOptions tune the garbage collector.
type GCOptions struct {
	Interval           time.Duration // between passes (default 10m); a write that orphans replicas brings the next one forward, at most to Grace/4
	Grace              time.Duration // replicas and node uploads younger than this are never collected (default 1h)
	FinishedRetention  time.Duration // how long a finished upload answers retries (default 24h)
	TombstoneRetention time.Duration // how long a tombstone keeps a rebuild from resurrecting a delete (default 30 days)
	UploadExpiry       time.Duration // open uploads older than this are aborted (default 7 days)
}

func (o GCOptions) withDefaults() GCOptions {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&o.Interval, 10 * time.Minute}, {&o.Grace, time.Hour}, {&o.FinishedRetention, 24 * time.Hour},
		{&o.TombstoneRetention, 30 * 24 * time.Hour}, {&o.UploadExpiry, 7 * 24 * time.Hour}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	return o
}

type collector struct {
	u      *Upkeep
	opts   GCOptions
	hintCh chan struct{}
	mu     sync.Mutex // one pass at a time
	last   GCReport
}

func newCollector(u *Upkeep, o GCOptions) *collector {
	return &collector{u: u, opts: o.withDefaults(), hintCh: make(chan struct{}, 1)}
}

// hint says replicas were orphaned at t: a pass is due one grace later.
func (c *collector) hint(time.Time) {
	select {
	case c.hintCh <- struct{}{}:
	default:
	}
}

// CollectGarbage runs a pass every interval until ctx ends; orphaned
// replicas bring the next pass forward to a grace period from then (not
// sooner than a quarter of the grace after the last).
func (u *Upkeep) CollectGarbage(ctx context.Context) {
	c := u.gc
	next := time.Now().Add(c.opts.Interval)
	for {
		wait := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-c.hintCh:
			wait.Stop()
			if soon := time.Now().Add(c.opts.Grace + c.opts.Grace/10); soon.Before(next) {
				next = soon
			}
			continue
		case <-wait.C:
		}
		next = time.Now().Add(c.opts.Interval)
		if !u.Maintainer() {
			continue // the maintainer's pass collects every node
		}
		if _, err := u.GCPass(ctx); err != nil && ctx.Err() == nil {
			u.log.Warn("garbage collection pass failed; retried at the next", "error", err)
		}
		next = time.Now().Add(c.opts.Interval)
	}
}

// LastGC is the report of the last pass.
func (u *Upkeep) LastGC() GCReport {
	u.gc.mu.Lock()
	defer u.gc.mu.Unlock()
	return u.gc.last
}

// listed is one replica found on a node.
type listed struct {
	name     string
	size     int64
	modified time.Time
}

// GCPass runs one garbage collection pass.
func (u *Upkeep) GCPass(ctx context.Context) (GCReport, error) {
	c := u.gc
	c.mu.Lock()
	defer c.mu.Unlock()
	rep := GCReport{Time: time.Now().UTC()}
	u.metrics.gcPasses.Inc()
	if reason := u.front.SafeMode(); reason != "" {
		rep.Held = "safe mode: " + reason
		u.metrics.gcHeld.Inc()
		c.last = rep
		return rep, nil
	}
	// 1. what the nodes hold, listed before the catalogue is read
	objects := map[string][]listed{}
	for _, n := range u.nodes.List() {
		if !u.nodes.Up(n.ID) {
			continue
		}
		objs, err := u.listNode(ctx, n.ID)
		if err != nil {
			u.log.Warn("garbage collection: listing a node failed; it is skipped this pass", "node", n.ID, "error", err)
			continue
		}
		objects[n.ID] = objs
		rep.NodesListed++
	}
	// 2. every name an entry or an upload reaches
	refs, openNames, err := u.references(ctx)
	if err != nil {
		return rep, err
	}
	cutoff := time.Now().Add(-c.opts.Grace)
	var old int
	for _, objs := range objects {
		for _, o := range objs {
			if o.modified.Before(cutoff) {
				old++
			}
		}
	}
	if len(refs) == 0 && len(openNames) == 0 && old > 0 && u.noTombstones(ctx) {
		rep.Held = "the catalogue lists no object and no delete while the nodes hold old replicas: " +
			"it looks lost; rebuild it (harvest-blob rebuild) before anything is collected"
		u.metrics.gcHeld.Inc()
		u.log.Error("garbage collection held back", "reason", rep.Held, "old_replicas", old)
		c.last = rep
		return rep, nil
	}
	// 3. delete what nothing reaches and is older than the grace
	var orphanBytes int64
	for node, objs := range objects {
		var left int64
		for _, o := range objs {
			rep.Replicas++
			if refs[node+"\x00"+o.name] || openNames[o.name] {
				rep.Referenced++
				continue
			}
			if !o.modified.Before(cutoff) {
				rep.YoungOrphans++
				left += o.size
				continue
			}
			err := u.nodes.Call(ctx, node, func(ctx context.Context) error {
				return u.nodes.Client(node).RemoveObject(ctx, nodes.DataBucket, o.name, minio.RemoveObjectOptions{})
			})
			if err != nil {
				left += o.size
				u.log.Warn("garbage collection: deleting an orphan failed", "node", node, "name", o.name, "error", err)
				continue
			}
			rep.Deleted++
			rep.DeletedBytes += o.size
			u.metrics.gcDeleted.Inc()
			u.metrics.gcDeletedBytes.Add(float64(o.size))
			u.log.Debug("garbage collection: orphan deleted", "node", node, "name", o.name, "bytes", o.size)
		}
		u.nodes.SetOrphans(node, left)
		orphanBytes += left
	}
	rep.OrphanBytes = orphanBytes
	u.metrics.orphanBytes.Set(float64(orphanBytes))
	u.expireRecords(ctx, &rep)
	if rep.Deleted > 0 || rep.ExpiredUploads > 0 {
		u.log.Info("garbage collection pass", "deleted", rep.Deleted, "deleted_bytes", rep.DeletedBytes,
			"young_orphans", rep.YoungOrphans, "expired_uploads", rep.ExpiredUploads)
	}
	c.last = rep
	return rep, nil
}

// noTombstones reports whether the catalogue records no delete at all (or
// cannot be read).
func (u *Upkeep) noTombstones(ctx context.Context) bool {
	tombs, err := u.cat.Tombstones(ctx)
	return err != nil || len(tombs) == 0
}

// listNode lists a node's replicas of this deployment, within the node
// timeout per page.
func (u *Upkeep) listNode(ctx context.Context, node string) ([]listed, error) {
	release, err := u.nodes.Acquire(ctx, node)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := nodes.NewStall(u.timeouts.Node, cancel)
	defer st.Stop()
	cl := u.nodes.Client(node)
	var objs []listed
	for o := range cl.Client.ListObjects(ctx, nodes.DataBucket, minio.ListObjectsOptions{Prefix: u.namePrefix, Recursive: true}) {
		if o.Err != nil {
			return nil, o.Err
		}
		st.Touch()
		objs = append(objs, listed{name: o.Key, size: o.Size, modified: o.LastModified})
	}
	return objs, nil
}

// references reads every entry of the catalogue (whatever bucket records
// say) and every upload record: the (node, name) pairs entries name, and
// the names open uploads will complete to.
func (u *Upkeep) references(ctx context.Context) (map[string]bool, map[string]bool, error) {
	refs, names := map[string]bool{}, map[string]bool{}
	// uploads first: a Complete deletes its upload record in the transaction
	// that writes its entry, so a name is in one read or the other
	ups, err := u.kv.List(ctx, u.prefix+"blob/uploads/")
	if err != nil {
		return nil, nil, err
	}
	for _, p := range ups {
		var rec catalog.Upload
		if err := json.Unmarshal(p.Value, &rec); err != nil {
			return nil, nil, errors.New("garbage collection: unreadable upload record " + p.Key)
		}
		names[rec.Name] = true
	}
	pairs, err := u.kv.List(ctx, u.prefix+"blob/objects/")
	if err != nil {
		return nil, nil, err
	}
	for _, p := range pairs {
		var e catalog.Entry
		if err := json.Unmarshal(p.Value, &e); err != nil {
			// an entry that cannot be read may name anything: collect nothing
			return nil, nil, errors.New("garbage collection: unreadable catalogue entry " + p.Key)
		}
		for _, r := range e.Replicas {
			refs[r.Node+"\x00"+r.Name] = true
		}
	}
	return refs, names, nil
}

// expireRecords removes the KV records that only answer retries once they
// are old, aborts uploads left open too long, and removes the part
// records of uploads that ended.
func (u *Upkeep) expireRecords(ctx context.Context, rep *GCReport) {
	o := u.gc.opts
	now := time.Now()
	if pairs, err := u.kv.List(ctx, u.prefix+"blob/finished/"); err == nil {
		for _, p := range pairs {
			var f catalog.Finished
			if json.Unmarshal(p.Value, &f) == nil && now.Sub(f.Finished) > o.FinishedRetention {
				if ok, _ := u.kv.DeleteCAS(ctx, p.Key, p.Index); ok {
					rep.ExpiredRecords++
				}
			}
		}
	}
	if tombs, err := u.cat.Tombstones(ctx); err == nil {
		for index, t := range tombs {
			if now.Sub(t.Deleted) > o.TombstoneRetention && u.cat.DropTombstone(ctx, t, index) == nil {
				rep.ExpiredRecords++
			}
		}
	}
	open := map[string]bool{}
	if pairs, err := u.kv.List(ctx, u.prefix+"blob/uploads/"); err == nil {
		for _, p := range pairs {
			var rec catalog.Upload
			if json.Unmarshal(p.Value, &rec) != nil {
				continue
			}
			open[rec.ID] = true
			if now.Sub(rec.Initiated) > o.UploadExpiry && u.front.AbortUpload(ctx, rec.Entry.Bucket, rec.Entry.Key, rec.ID) == nil {
				rep.ExpiredUploads++
				u.metrics.gcAbortedUploads.Inc()
				u.log.Info("an upload left open too long was aborted", "bucket", rec.Entry.Bucket, "key", rec.Entry.Key, "initiated", rec.Initiated)
			}
		}
	} else {
		return
	}
	if pairs, err := u.kv.List(ctx, u.prefix+"blob/parts/"); err == nil {
		for _, p := range pairs {
			rest := strings.TrimPrefix(p.Key, u.prefix+"blob/parts/")
			fields := strings.Split(rest, "/")
			var pt catalog.Part
			if len(fields) != 3 || open[fields[1]] || json.Unmarshal(p.Value, &pt) != nil || now.Sub(pt.Written) < o.Grace {
				continue
			}
			if ok, _ := u.kv.DeleteCAS(ctx, p.Key, p.Index); ok {
				rep.ExpiredRecords++
			}
		}
	}
}

// DefaultGC fills in the defaults of what o leaves zero.
func DefaultGC(o GCOptions) GCOptions { return o.withDefaults() }
