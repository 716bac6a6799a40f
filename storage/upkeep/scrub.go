package upkeep

// The scrubber reads every replica, rate-limited, and checks it against
// the entry's block checksums (entries written before them: a single-part
// object against its ETag, the MD5); it also finds replicas missing on a
// live node. A bad or missing replica is dropped from its entry (never the
// last one) and the repairer re-creates it from a good one; the bad copy is
// left to the garbage collector. Replicas a read found bad or missing are
// queued (suspect) and checked at once.

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/time/rate"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/integrity"
)

// ScrubOptions tune the scrubber.
type ScrubOptions struct {
	Interval       time.Duration // between passes over the whole catalogue (default 24h)
	BytesPerSecond float64       // how fast it reads replicas (default 16 MiB/s)
}

func (o ScrubOptions) withDefaults() ScrubOptions {
	if o.Interval <= 0 {
		o.Interval = 24 * time.Hour
	}
	if o.BytesPerSecond <= 0 {
		o.BytesPerSecond = 16 << 20
	}
	return o
}

type scrubber struct {
	u      *Upkeep
	opts   ScrubOptions
	limit  *rate.Limiter
	queue  chan suspectReplica
	mu     sync.Mutex // one pass at a time
	lastMu sync.Mutex
	last   ScrubReport
}

type suspectReplica struct {
	bucket, key string
	replica     catalog.Replica
}

func newScrubber(u *Upkeep, o ScrubOptions) *scrubber {
	o = o.withDefaults()
	burst := int(max(o.BytesPerSecond, 1<<20))
	return &scrubber{u: u, opts: o, limit: rate.NewLimiter(rate.Limit(o.BytesPerSecond), burst), queue: make(chan suspectReplica, 256)}
}

// suspect queues a replica a read found bad or missing (dropped when the
// queue is full: the next pass finds it).
func (s *scrubber) suspect(bucket, key string, r catalog.Replica) {
	select {
	case s.queue <- suspectReplica{bucket, key, r}:
	default:
	}
}

// Scrub runs a pass every interval and checks suspects as they come,
// until ctx ends.
func (u *Upkeep) Scrub(ctx context.Context) {
	s := u.scrub
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case sus := <-s.queue:
			u.checkSuspect(ctx, sus)
		case <-t.C:
			if !u.Maintainer() {
				continue // the maintainer's pass covers every replica
			}
			if _, err := u.ScrubPass(ctx); err != nil && ctx.Err() == nil {
				u.log.Warn("scrub pass failed", "error", err)
			}
		}
	}
}

// LastScrub is the report of the last pass.
func (u *Upkeep) LastScrub() ScrubReport {
	u.scrub.lastMu.Lock()
	defer u.scrub.lastMu.Unlock()
	return u.scrub.last
}

func (u *Upkeep) checkSuspect(ctx context.Context, sus suspectReplica) {
	s := u.scrub
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := u.cat.Get(ctx, sus.bucket, sus.key)
	if err != nil || !hasReplica(e, sus.replica) {
		return
	}
	var rep ScrubReport
	u.scrubReplica(ctx, e, sus.replica, &rep)
	if rep.Dropped > 0 {
		u.repair.kick()
	}
}

// ScrubPass checks every replica of every object once.
func (u *Upkeep) ScrubPass(ctx context.Context) (rep ScrubReport, err error) {
	s := u.scrub
	s.mu.Lock()
	defer s.mu.Unlock()
	rep = ScrubReport{Started: time.Now().UTC()}
	defer func() {
		rep.Finished = time.Now().UTC()
		s.lastMu.Lock()
		s.last = rep
		s.lastMu.Unlock()
	}()
	if reason := u.front.SafeMode(); reason != "" {
		rep.Held = "safe mode: " + reason
		return rep, nil
	}
	entries, _, err := u.front.Entries(ctx)
	if err != nil {
		return rep, err
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		rep.Objects++
		for _, r := range e.Replicas {
			u.scrubReplica(ctx, e, r, &rep)
		}
	}
	u.metrics.scrubPasses.Inc()
	if rep.Dropped > 0 {
		u.repair.kick()
	}
	u.log.Info("scrub pass", "objects", rep.Objects, "replicas", rep.Replicas, "bytes", rep.Bytes, "corrupt", rep.Corrupt,
		"missing", rep.Missing, "dropped", rep.Dropped, "skipped", rep.Skipped, "unchecked", rep.Unchecked)
	return rep, nil
}

func hasReplica(e catalog.Entry, r catalog.Replica) bool {
	for _, x := range e.Replicas {
		if x == r {
			return true
		}
	}
	return false
}

// errNothingToCheck says an entry has neither block checksums nor an MD5.
var errNothingToCheck = errors.New("nothing to check the replica against")

// scrubReplica checks one replica and drops it from its entry when it is
// bad or missing.
func (u *Upkeep) scrubReplica(ctx context.Context, e catalog.Entry, r catalog.Replica, rep *ScrubReport) {
	if !u.nodes.Up(r.Node) || u.nodes.Busy(r.Node) {
		rep.Skipped++
		return
	}
	err := u.verifyReplica(ctx, e, r, rep)
	switch {
	case err == nil:
		return
	case errors.Is(err, errNothingToCheck):
		rep.Unchecked++
		return
	case errors.Is(err, integrity.ErrCorrupt):
		rep.Corrupt++
		u.metrics.scrubCorrupt.Inc()
	case minio.ToErrorResponse(err).Code == "NoSuchKey":
		rep.Missing++
		u.metrics.scrubMissing.Inc()
	default:
		rep.Skipped++
		u.log.Debug("scrub: replica unreadable now; checked again next pass", "node", r.Node, "bucket", e.Bucket, "key", e.Key, "error", err)
		return
	}
	u.log.Warn("scrub: bad replica; dropping it for repair", "bucket", e.Bucket, "key", e.Key, "node", r.Node, "error", err)
	_, uerr := u.cat.Update(ctx, e.Bucket, e.Key, func(cur *catalog.Entry) error {
		if !catalog.SameVersion(*cur, e) || !hasReplica(*cur, r) {
			return errStale
		}
		if len(cur.Replicas) == 1 {
			return errLastReplica
		}
		kept := cur.Replicas[:0:0]
		for _, x := range cur.Replicas {
			if x != r {
				kept = append(kept, x)
			}
		}
		cur.Replicas = kept
		return nil
	})
	switch {
	case uerr == nil:
		rep.Dropped++
		u.nodes.Orphan(r.Node, e.Size)
	case errors.Is(uerr, errLastReplica):
		u.log.Error("scrub: the only replica of an object is bad; kept for an operator", "bucket", e.Bucket, "key", e.Key, "node", r.Node)
	case !errors.Is(uerr, errStale) && !errors.Is(uerr, catalog.ErrNotFound):
		u.log.Warn("scrub: dropping a bad replica failed; tried again next pass", "bucket", e.Bucket, "key", e.Key, "error", uerr)
	}
}

var errLastReplica = errors.New("the last replica is not dropped")

// verifyReplica reads a whole replica (rate-limited) and checks it.
func (u *Upkeep) verifyReplica(ctx context.Context, e catalog.Entry, r catalog.Replica, rep *ScrubReport) error {
	single := !strings.Contains(e.ETag, "-")
	if len(e.Layout) == 0 && !single {
		return errNothingToCheck
	}
	body, err := u.front.OpenReplica(ctx, r, e.Size)
	if err != nil {
		return err
	}
	defer body.Close()
	src := &limitedReader{ctx: ctx, r: body, l: u.scrub.limit}
	if len(e.Layout) > 0 {
		err = integrity.Check(e.Layout, src)
	} else {
		h := md5.New()
		if _, err = io.Copy(h, src); err == nil && `"`+hex.EncodeToString(h.Sum(nil))+`"` != e.ETag {
			err = fmt.Errorf("%w: MD5 %x, ETag %s", integrity.ErrCorrupt, h.Sum(nil), e.ETag)
		}
	}
	rep.Replicas++
	rep.Bytes += src.n
	u.metrics.scrubbedReplicas.Inc()
	u.metrics.scrubbedBytes.Add(float64(src.n))
	return err
}

// limitedReader reads no faster than its limiter allows.
type limitedReader struct {
	ctx context.Context
	r   io.Reader
	l   *rate.Limiter
	n   int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if len(p) > l.l.Burst() {
		p = p[:l.l.Burst()]
	}
	n, err := l.r.Read(p)
	if n > 0 {
		l.n += int64(n)
		if werr := l.l.WaitN(l.ctx, n); werr != nil {
			return n, werr
		}
	}
	return n, err
}
