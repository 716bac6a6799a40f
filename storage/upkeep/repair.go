package upkeep

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/versity/versitygw/s3err"
	"golang.org/x/time/rate"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
)

// RepairOptions tune the repairer.
type RepairOptions struct {
	// PerServerPerHour caps the replicas one server receives from the
	// repairer (the paper's production setting: 30 blocks per hour per
	// server, so that re-replication never loads a primary tenant).
	PerServerPerHour float64
	// Interval between retries of what the rate limit or a failure left
	// short: a retry reads those objects' entries only.
	Interval time.Duration
	// ScanInterval between scans of the whole catalogue (the safety net,
	// and the recount of what each node holds); a scan also runs at start,
	// when a node is lost, a bucket's policy changes, the scrubber drops
	// replicas or this front becomes the maintainer.
	ScanInterval time.Duration
}

func (o RepairOptions) withDefaults() RepairOptions {
	if o.PerServerPerHour <= 0 {
		o.PerServerPerHour = 30
	}
	if o.Interval <= 0 {
		o.Interval = 5 * time.Minute
	}
	if o.ScanInterval <= 0 {
		o.ScanInterval = time.Hour
	}
	return o
}

// repairer re-creates missing replicas, fewest-replicas-left first, by the
// same placement rules as a write (Algorithm 2 around the survivors).
type repairer struct {
	u      *Upkeep
	opts   RepairOptions
	kickCh chan struct{}
	mu     sync.Mutex
	limits map[string]*rate.Limiter
	done   []time.Time // when each replica of the last rateWindow was re-created
	status api.BlobStatus
	total  int64
	left   []entryRef // short objects the last pass could not repair, for the next retry
	// scanSeen is the index of the scan-wanted key at the maintainer's last
	// read (scanRead: there was one; 0 is an absent key).
	scanSeen uint64
	scanRead bool
}

// entryRef names one object.
type entryRef struct{ bucket, key string }

// rateWindow is how far back the repair rate is measured.
const rateWindow = 10 * time.Minute

func newRepairer(u *Upkeep, o RepairOptions) *repairer {
	return &repairer{u: u, opts: o.withDefaults(), kickCh: make(chan struct{}, 1), limits: map[string]*rate.Limiter{}}
}

func (r *repairer) kick() {
	select {
	case r.kickCh <- struct{}{}:
	default:
	}
}

// Repair scans and repairs until ctx ends: a scan of the whole catalogue at
// start, on a kick and every ScanInterval; between them, every Interval, a
// retry of the objects the last pass left short, which reads only theirs.
func (u *Upkeep) Repair(ctx context.Context) {
	r := u.repair
	retry, full := time.NewTicker(r.opts.Interval), time.NewTicker(r.opts.ScanInterval)
	defer retry.Stop()
	defer full.Stop()
	scan, kicked := true, false
	for {
		if !scan && u.Maintainer() && r.askedToScan(ctx) {
			scan = true // another front found something to repair
		}
		var err error
		if scan {
			err = r.scan(ctx)
		} else {
			err = r.retry(ctx)
		}
		if err != nil && ctx.Err() == nil {
			u.log.Warn("repair pass failed", "full_scan", scan, "error", err)
		}
		if kicked && !u.Maintainer() {
			r.askToScan(ctx) // what called for a scan here (a scrub's drop) is the maintainer's to repair
		}
		select {
		case <-ctx.Done():
			return
		case <-full.C:
			scan, kicked = true, false
		case <-r.kickCh:
			scan, kicked = true, true
		case <-retry.C:
			scan, kicked = false, false
		}
	}
}

// scanWanted is the KV key (under the prefix) a standing-by front writes
// when something calls for a scan (a scrub of its reads dropped a replica),
// and the maintainer reads at each retry: a change of it brings its next
// full scan forward.
const scanWanted = "blob/maintainer-scan"

func (r *repairer) askToScan(ctx context.Context) {
	u := r.u
	if _, err := u.kv.Txn(ctx, []kv.Op{{Verb: kv.Set, Key: u.prefix + scanWanted, Value: []byte(time.Now().UTC().Format(time.RFC3339))}}); err != nil {
		u.log.Warn("could not ask the maintainer for a scan; it scans at its interval", "error", err)
	}
}

// askedToScan reports whether another front asked for a scan since the
// maintainer last read the key (its first read only notes the index; the
// maintainer scans when it starts anyway).
func (r *repairer) askedToScan(ctx context.Context) bool {
	_, index, err := r.u.kv.Get(ctx, r.u.prefix+scanWanted)
	if err != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	asked := r.scanRead && index != r.scanSeen
	r.scanSeen, r.scanRead = index, true
	return asked
}

// scan counts what every node holds (the capacity accounting survives a
// restart this way, and follows the other fronts' writes), rebuilds the
// grid, and, on the maintainer, repairs the objects short of replicas,
// fewest left first.
func (r *repairer) scan(ctx context.Context) error {
	u := r.u
	began := time.Now()
	entries, policies, err := u.front.Entries(ctx)
	if err != nil {
		return err
	}
	used := map[string]int64{}
	var short []catalog.Entry
	lost := 0
	for _, e := range entries {
		for _, rep := range e.Replicas {
			used[rep.Node] += e.Size
		}
		switch {
		case len(e.Replicas) == 0:
			lost++
		case len(e.Replicas) < policies[e.Bucket].Replicas:
			short = append(short, e)
		}
	}
	u.nodes.SetCommitted(used, began)
	u.front.Regrid()
	r.setScan(len(entries), len(short), lost)
	r.repairAll(ctx, short, policies)
	return nil
}

// repairAll repairs the short objects on the maintainer, fewest replicas
// left first, and keeps those it could not repair for the next retry.
func (r *repairer) repairAll(ctx context.Context, short []catalog.Entry, policies map[string]Policy) {
	u := r.u
	left := short
	defer func() {
		refs := make([]entryRef, len(left))
		for i, e := range left {
			refs[i] = entryRef{e.Bucket, e.Key}
		}
		r.mu.Lock()
		r.left = refs
		r.mu.Unlock()
	}()
	if reason := u.front.SafeMode(); reason != "" {
		if len(short) > 0 {
			u.log.Warn("repair held back: safe mode", "reason", reason, "under_replicated", len(short))
		}
		return
	}
	if !u.Maintainer() {
		return // the maintainer repairs (maintainer.go); this front only counted
	}
	u.orderRepairs(short)
	left = nil
	for i, e := range short {
		if ctx.Err() != nil || !u.Maintainer() {
			left = append(left, short[i:]...)
			return
		}
		if err := r.repairOne(ctx, e, policies[e.Bucket]); err != nil {
			left = append(left, e)
			if !errors.Is(err, errRateLimited) {
				u.metrics.repairFailures.Inc()
				u.log.Warn("repair failed; retried later", "bucket", e.Bucket, "key", e.Key, "error", err)
			}
		}
	}
}

// retry reads the entries of the objects the last pass left short (and
// nothing else) and repairs those still short.
func (r *repairer) retry(ctx context.Context) error {
	u := r.u
	r.mu.Lock()
	refs := r.left
	r.mu.Unlock()
	if len(refs) == 0 || !u.Maintainer() {
		return nil
	}
	policies := map[string]Policy{}
	var short []catalog.Entry
	for _, ref := range refs {
		e, err := u.cat.Get(ctx, ref.bucket, ref.key)
		if errors.Is(err, catalog.ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return err
		}
		pol, ok := policies[ref.bucket]
		if !ok {
			found, err := u.front.BucketPolicy(ctx, ref.bucket)
			var gone s3err.BucketError
			if errors.As(err, &gone) {
				continue // the bucket is gone: so is the object
			}
			if err != nil {
				return err // the same objects are retried next time
			}
			pol = found
			policies[ref.bucket] = pol
		}
		if len(e.Replicas) > 0 && len(e.Replicas) < pol.Replicas {
			short = append(short, e)
		}
	}
	r.mu.Lock()
	r.status.UnderReplicated = len(short)
	r.mu.Unlock()
	u.metrics.underReplicated.Set(float64(len(short)))
	r.repairAll(ctx, short, policies)
	return nil
}

// orderRepairs sorts the objects short of replicas: fewest left first,
// then the highest risk of losing the survivors (grid.RepairFirst: their
// tenants' reimage rates), so what a next reimage could lose is repaired
// first.
func (u *Upkeep) orderRepairs(short []catalog.Entry) {
	survivors := make([][]string, len(short))
	for i, e := range short {
		ids := make([]string, len(e.Replicas))
		for k, r := range e.Replicas {
			ids[k] = r.Node
		}
		survivors[i] = ids
	}
	risk := u.front.RepairRisks(survivors)
	order := make([]int, len(short))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		i, j := order[x], order[y]
		return grid.RepairFirst(len(short[i].Replicas), risk[i], len(short[j].Replicas), risk[j])
	})
	sorted := make([]catalog.Entry, len(short))
	for k, i := range order {
		sorted[k] = short[i]
	}
	copy(short, sorted)
}

var (
	errRateLimited = errors.New("repair rate limit reached for the target server")
	errStale       = errors.New("object replaced while it was being repaired")
)

// allow takes one replica off each receiving server's hourly allowance, or
// nothing when any of them has none left (so a refused repair does not use
// up the others' allowance).
func (r *repairer) allow(nodes []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	limits := make([]*rate.Limiter, len(nodes))
	for i, node := range nodes {
		l := r.limits[node]
		if l == nil {
			l = rate.NewLimiter(rate.Limit(r.opts.PerServerPerHour/3600), 1)
			r.limits[node] = l
		}
		if l.TokensAt(now) < 1 {
			return false
		}
		limits[i] = l
	}
	for _, l := range limits {
		l.AllowN(now, 1)
	}
	return true
}

// repairOne copies an object from its good replicas (every block checked
// as it is read) to the nodes Algorithm 2 picks around its survivors
// (lines 6-18 with the survivors' rows, columns and environments taken),
// reads each new copy back and checks it, then adds the copies to the
// entry. A copy that fails its check, or that the entry cannot take (the
// object changed meanwhile), is left to the garbage collector.
func (r *repairer) repairOne(ctx context.Context, e catalog.Entry, pol Policy) error {
	u := r.u
	existing := make([]string, 0, len(e.Replicas))
	for _, rep := range e.Replicas {
		existing = append(existing, rep.Node)
	}
	place, err := u.front.Place(e, pol, existing)
	if err != nil {
		return err
	}
	if !r.allow(place.Nodes) {
		u.nodes.Unreserve(place.Nodes, e.Size)
		return errRateLimited
	}
	rctx, cancel := context.WithTimeout(ctx, u.timeouts.Request)
	defer cancel()
	body, err := u.front.OpenObject(rctx, e)
	if err != nil {
		u.nodes.Unreserve(place.Nodes, e.Size)
		return err
	}
	defer body.Close()
	// a name of its own: a copy never lands on a name an earlier copy (now
	// an orphan the GC may be deleting) had on the same node
	name, sum, err := u.front.WriteReplicas(rctx, place.Nodes, e, body)
	if err != nil {
		u.nodes.Unreserve(place.Nodes, e.Size)
		return err
	}
	written := time.Now()
	if !strings.Contains(e.ETag, "-") && `"`+hex.EncodeToString(sum)+`"` != e.ETag {
		err = errors.New("the bytes read do not match the object's ETag")
	}
	var good []string
	for _, n := range place.Nodes {
		if err != nil {
			break
		}
		if verr := u.verifyReplica(rctx, e, catalog.Replica{Node: n, Name: name}, &ScrubReport{}); verr != nil &&
			!errors.Is(verr, errNothingToCheck) {
			u.metrics.repairVerifyFails.Inc()
			u.log.Warn("a repaired copy failed its check; left to the garbage collector", "bucket", e.Bucket, "key", e.Key, "node", n, "error", verr)
			continue
		}
		good = append(good, n)
	}
	if left := u.commitWindow - time.Since(written); err == nil && len(good) > 0 && left > 0 {
		// the entry names the copies within the commit window, or never
		// (the GC's grace is twice that window)
		uctx, cancel := context.WithTimeout(ctx, left)
		defer cancel()
		_, err = u.cat.Update(uctx, e.Bucket, e.Key, func(cur *catalog.Entry) error {
			if !catalog.SameVersion(*cur, e) {
				return errStale
			}
			for _, n := range good {
				if !cur.HasReplicaOn(n) {
					cur.Replicas = append(cur.Replicas, catalog.Replica{Node: n, Name: name})
				}
			}
			return nil
		})
	} else if err == nil {
		err = errors.New("no repaired copy passed its check in time")
	}
	if err != nil {
		// the copies are not named by the entry (or not surely): the GC's
		u.nodes.Unreserve(place.Nodes, e.Size)
		return err
	}
	u.nodes.Commit(good, e.Size, e.Size)
	var bad []string
	for _, n := range place.Nodes {
		if !slices.Contains(good, n) {
			bad = append(bad, n)
		}
	}
	u.nodes.Unreserve(bad, e.Size)
	r.repaired(len(good), e.Size)
	u.log.Info("replicas re-created", "bucket", e.Bucket, "key", e.Key, "nodes", good, "degraded", place.Degraded)
	return nil
}

func (r *repairer) repaired(n int, size int64) {
	r.u.metrics.repaired.Add(float64(n))
	r.u.metrics.repairBytes.Add(float64(n) * float64(size))
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	old := 0
	for old < len(r.done) && now.Sub(r.done[old]) > rateWindow {
		old++
	}
	r.done = r.done[old:]
	for i := 0; i < n; i++ {
		r.done = append(r.done, now)
	}
	r.total += int64(n)
	r.status.UnderReplicated = max(0, r.status.UnderReplicated-1)
	r.u.metrics.underReplicated.Set(float64(r.status.UnderReplicated))
}

// adjustObjects keeps the object count current between scans (a write of
// a new key, a delete).
func (r *repairer) adjustObjects(delta int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Objects = max(0, r.status.Objects+delta)
	r.u.metrics.objects.Set(float64(r.status.Objects))
}

func (r *repairer) setScan(objects, under, lost int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Objects, r.status.UnderReplicated, r.status.Lost = objects, under, lost
	r.status.LastScan = time.Now().UTC()
	r.u.metrics.objects.Set(float64(objects))
	r.u.metrics.underReplicated.Set(float64(under))
}
