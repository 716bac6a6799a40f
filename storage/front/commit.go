package front

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

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
func (b *Backend) commit(ctx context.Context, e catalog.Entry, held int64) error {
	nodes := make([]string, len(e.Replicas))
	for i, r := range e.Replicas {
		nodes[i] = r.Node
	}
	offered := false // a check-and-set was sent and its fate not learnt
	deadline := time.Now().Add(CommitWindow(b.timeouts.Consul) - b.timeouts.Consul)
	for attempt := 0; attempt < commitAttempts && time.Now().Before(deadline); attempt++ {
		cur, index, err := b.cat.Lookup(ctx, e.Bucket, e.Key)
		if err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return b.uncommitted(e, nodes, held, offered, err)
		}
		ok, err := b.cat.Replace(ctx, e, index)
		if err == nil && ok {
			b.nodes.Commit(nodes, held, e.Size)
			b.superseded(cur, index)
			return nil
		}
		if err == nil {
			continue // another writer of the key got there first: read again
		}
		offered = true
		b.metrics.ambiguousWrites.Inc()
		switch learnt := b.learn(e, index); {
		case learnt == nil: // it committed
			b.nodes.Commit(nodes, held, e.Size)
			b.superseded(cur, index)
			return nil
		case errors.Is(learnt, errSuperseded): // a later write won; ours is overwritten either way
			b.nodes.Unreserve(nodes, held)
			b.log.Info("a write's commit was not confirmed and a later write replaced the key; acknowledged as overwritten",
				"bucket", e.Bucket, "key", e.Key, "error", err)
			return nil
		case errors.Is(learnt, errNotCommitted):
			continue
		default:
			return b.uncommitted(e, nodes, held, true, err)
		}
	}
	return b.uncommitted(e, nodes, held, offered, errors.New("too many concurrent writes of the key"))
}

var errNotCommitted = errors.New("the entry was not written")

// learn reads the entry back after an ambiguous check-and-set at index:
// nil when e is what the key holds, errNotCommitted when the key is
// unchanged (the write did not happen), errSuperseded when another version
// is there now, or the read's error.
func (b *Backend) learn(e catalog.Entry, index uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeouts.Consul)
	defer cancel()
	got, now, err := b.cat.Lookup(ctx, e.Bucket, e.Key)
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
func (b *Backend) uncommitted(e catalog.Entry, nodes []string, held int64, offered bool, err error) error {
	b.nodes.Unreserve(nodes, held)
	b.metrics.writeFailures.Inc()
	if !offered {
		for _, r := range e.Replicas {
			b.removeFresh(r.Node, r.Name)
		}
		b.log.Warn("a write could not be recorded; its replicas are removed", "bucket", e.Bucket, "key", e.Key, "error", err)
		return err
	}
	b.log.Warn("a write's commit could not be confirmed; its replicas are left to the garbage collector",
		"bucket", e.Bucket, "key", e.Key, "error", err)
	return errUnconfirmed
}

// superseded accounts the replicas of a version no entry lists any more
// as orphans, which the garbage collector deletes after its grace.
func (b *Backend) superseded(old catalog.Entry, index uint64) {
	if index == 0 {
		b.upkeep.AdjustObjects(1) // a new key
		return
	}
	for _, r := range old.Replicas {
		b.nodes.Orphan(r.Node, old.Size)
	}
	b.upkeep.HintGC(time.Now())
}
