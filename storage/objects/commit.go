package objects

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/storage/catalog"
)

// The write protocol. A write's replicas carry a name no other write uses;
// the write becomes visible at one point only: the check-and-set of its
// catalogue entry (for a multipart upload, the transaction that also
// retires the upload, complete.go). Until that check-and-set is sent the
// replicas are the writer's and a failure removes them at once. Once it is
// sent, an error does not say whether it committed (Consul may have
// applied it and lost the answer): the writer reads the entry back to
// learn, and whatever it cannot learn it leaves to the garbage collector,
// which deletes only replicas no entry reaches, after a grace period. No
// path deletes a replica an entry may point to.

// commitAttempts bounds the check-and-set retries against other writers
// of the same key.
const commitAttempts = 16

// CommitWindow is how long after its replicas are written a write may
// still send its entry's check-and-set: six Consul timeouts. The garbage
// collector's grace must be at least twice this, so it never collects
// replicas whose entry is still on its way.
func CommitWindow(consul time.Duration) time.Duration { return 6 * consul }

// errSuperseded says a later write replaced the entry while the commit
// could not be confirmed: the write is acknowledged as overwritten.
var errSuperseded = errors.New("a later write of the key was committed")

// commit records e (whose replicas are written and whose bytes, held,
// are reserved on their nodes) as the key's current version: the last
// writer wins, as in S3. The replaced version's replicas become orphans.
func (w *Writer) commit(ctx context.Context, e catalog.Entry, held int64) error {
	nodes := make([]string, len(e.Replicas))
	for i, r := range e.Replicas {
		nodes[i] = r.Node
	}
	offered := false // a check-and-set was sent and its fate not learnt
	deadline := time.Now().Add(CommitWindow(w.timeouts.Consul) - w.timeouts.Consul)
	for attempt := 0; attempt < commitAttempts && time.Now().Before(deadline); attempt++ {
		cur, index, err := w.cat.Lookup(ctx, e.Bucket, e.Key)
		if err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return w.uncommitted(e, nodes, held, offered, err)
		}
		ok, err := w.cat.Replace(ctx, e, index)
		if err == nil && ok {
			w.nodes.Commit(nodes, held, e.Size)
			w.superseded(cur, index)
			return nil
		}
		if err == nil {
			continue // another writer of the key got there first: read again
		}
		offered = true
		w.metrics.AmbiguousWrites.Inc()
		switch learnt := w.learn(e, index); {
		case learnt == nil: // it committed
			w.nodes.Commit(nodes, held, e.Size)
			w.superseded(cur, index)
			return nil
		case errors.Is(learnt, errSuperseded): // a later write won; ours is overwritten either way
			w.nodes.Unreserve(nodes, held)
			w.log.Info("a write's commit was not confirmed and a later write replaced the key; acknowledged as overwritten",
				"bucket", e.Bucket, "key", e.Key, "error", err)
			return nil
		case errors.Is(learnt, errNotCommitted):
			continue
		default:
			return w.uncommitted(e, nodes, held, true, err)
		}
	}
	return w.uncommitted(e, nodes, held, offered, errors.New("too many concurrent writes of the key"))
}

var errNotCommitted = errors.New("the entry was not written")

// learn reads the entry back after an ambiguous check-and-set at index:
// nil when e is what the key holds, errNotCommitted when the key is
// unchanged (the write did not happen), errSuperseded when another version
// is there now, or the read's error.
func (w *Writer) learn(e catalog.Entry, index uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeouts.Consul)
	defer cancel()
	got, now, err := w.cat.Lookup(ctx, e.Bucket, e.Key)
	switch {
	case err != nil && !errors.Is(err, catalog.ErrNotFound):
		return err
	case err == nil && sameVersion(got, e):
		return nil
	case now == index:
		return errNotCommitted
	default:
		return errSuperseded
	}
}

// sameVersion reports whether two entries are one write's.
func sameVersion(a, b catalog.Entry) bool { return catalog.SameVersion(a, b) }

// newVersion is a fresh version ID for a write.
func newVersion() string {
	var v [12]byte
	_, _ = randRead(v[:])
	return hex.EncodeToString(v[:])
}

// uncommitted ends a write that is not visible: its replicas are removed
// when no check-and-set naming them was ever sent, else left to the
// garbage collector (the client is told the write is unconfirmed).
func (w *Writer) uncommitted(e catalog.Entry, nodes []string, held int64, offered bool, err error) error {
	w.nodes.Unreserve(nodes, held)
	w.metrics.WriteFailures.Inc()
	if !offered {
		for _, r := range e.Replicas {
			w.removeFresh(r.Node, r.Name)
		}
		w.log.Warn("a write could not be recorded; its replicas are removed", "bucket", e.Bucket, "key", e.Key, "error", err)
		return err
	}
	w.log.Warn("a write's commit could not be confirmed; its replicas are left to the garbage collector",
		"bucket", e.Bucket, "key", e.Key, "error", err)
	return errUnconfirmed
}

// superseded accounts the replicas of a version no entry lists any more
// as orphans, which the garbage collector deletes after its grace.
func (w *Writer) superseded(old catalog.Entry, index uint64) {
	if index == 0 {
		w.upkeep.AdjustObjects(1) // a new key
		return
	}
	for _, r := range old.Replicas {
		w.nodes.Orphan(r.Node, old.Size)
	}
	w.upkeep.HintGC(time.Now())
}

// Delete removes the key's catalogue entry with check-and-set, leaving a
// tombstone in the same transaction; its replicas become orphans, which
// the garbage collector deletes after its grace. A key that is not there
// is deleted already (as in S3), unless its bucket is gone too.
func (w *Writer) Delete(ctx context.Context, bucket, key string) error {
	for attempt := 0; attempt < commitAttempts; attempt++ {
		e, index, err := w.cat.Lookup(ctx, bucket, key)
		if errors.Is(err, catalog.ErrNotFound) {
			return w.missing(ctx, bucket, nil) // as S3: deleting nothing succeeds
		}
		if err != nil {
			return err
		}
		ok, err := w.cat.Delete(ctx, e, index, time.Now())
		if err != nil {
			// unconfirmed: whatever happened, the replicas are the GC's
			// (it deletes them only if no entry reaches them)
			w.metrics.AmbiguousWrites.Inc()
			return err
		}
		if ok {
			w.superseded(e, index)
			w.upkeep.AdjustObjects(-1)
			return nil
		}
	}
	return errors.New("too many concurrent writes of the key")
}

// SetMeta changes only the user metadata and content type of bucket/key,
// on the version src the client read (the ETag it names): a version
// written meanwhile is not overwritten with the old one's replicas
// (PreconditionFailed). A key gone is NoSuchKey.
func (w *Writer) SetMeta(ctx context.Context, bucket, key string, src catalog.Entry, userMeta map[string]string, contentType string) (catalog.Entry, error) {
	e, err := w.cat.Update(ctx, bucket, key, func(cur *catalog.Entry) error {
		if !sameVersion(*cur, src) {
			return s3err.GetAPIError(s3err.ErrPreconditionFailed)
		}
		cur.UserMeta, cur.ContentType = userMeta, contentType
		return nil
	})
	if errors.Is(err, catalog.ErrNotFound) {
		return e, s3err.GetAPIError(s3err.ErrNoSuchKey)
	}
	return e, err
}
