package front

// Fronts share what each writes (ledger): a node's room must hold across
// every front serving the tier, or two fronts could each admit a write
// that only one fits, and a front would learn what another committed only
// at its next full catalogue scan (repair.scan_interval, an hour by
// default), filling a node past its owner's declared capacity in between.
//
// At every health check (health.go) each front writes its ledger to
// <prefix>blob/fronts/<id>: the bytes it has in flight on each node
// (pending: writes being streamed, open uploads' parts) and the bytes it
// committed to each node, by ledgerSlot, over the last ledgerKeep. It then reads
// the other fronts' ledgers and counts, on each node, their pending bytes
// (while their ledger is fresher than ledgerFresh: a front that died has no
// writes in flight) and what they committed from the slot in which its own
// last scan began (what that scan did not count; a commit within that slot
// may be counted twice, which only refuses a write a little early). Deletes are
// not shared: they leave orphans on the node until the collector deletes
// them, so counting them late errs on the safe side too.
//
// The maintainer deletes ledgers not written for ledgerKeep (fronts that
// are gone). A ledger that does not decode is skipped; failures are logged
// once per episode (warnEpisode).

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/kv"
)

const (
	// ledgerFresh is how long a front's pending bytes count after it last
	// wrote its ledger (health checks run every 5 s by default).
	ledgerFresh = time.Minute
	// ledgerKeep is how long a front keeps what it committed in its ledger,
	// and how long after its last write the maintainer deletes it: longer
	// than the default repair.scan_interval, after which every front's own
	// scan counts those bytes.
	ledgerKeep = 2 * time.Hour
	// ledgerSlot is the time slot of the commits a ledger lists: with 24
	// slots in ledgerKeep a ledger stays far below Consul's 512 KiB value
	// limit even with hundreds of nodes.
	ledgerSlot = 5 * time.Minute
	// ledgerFolder holds one ledger per front under the prefix.
	ledgerFolder = "blob/fronts/"
)

// slotOf is the ledger slot of a time.
func slotOf(t time.Time) int64 { return t.Unix() / int64(ledgerSlot/time.Second) }

// ledgerDoc is one front's ledger.
type ledgerDoc struct {
	Written time.Time             `json:"written"`
	Pending map[string]int64      `json:"pending,omitempty"` // node -> bytes in flight
	Added   map[string][][2]int64 `json:"added,omitempty"`   // node -> [slot (unix seconds / 300), bytes committed in it]
}

// noteAdded records bytes this front committed to nodes now (n.mu held).
func (n *Nodes) noteAdded(ids []string, size int64, now time.Time) {
	slot := slotOf(now)
	if n.added == nil {
		n.added = map[string]map[int64]int64{}
	}
	for _, id := range ids {
		bySlot := n.added[id]
		if bySlot == nil {
			bySlot = map[int64]int64{}
			n.added[id] = bySlot
		}
		bySlot[slot] += size
	}
}

// ownLedger is this front's ledger now, dropping what it committed before
// ledgerKeep.
func (n *Nodes) ownLedger(now time.Time) ledgerDoc {
	n.mu.Lock()
	defer n.mu.Unlock()
	doc := ledgerDoc{Written: now.UTC(), Pending: map[string]int64{}, Added: map[string][][2]int64{}}
	oldest := slotOf(now.Add(-ledgerKeep))
	for id, s := range n.space {
		if s.pending > 0 {
			doc.Pending[id] = s.pending
		}
	}
	for id, bySlot := range n.added {
		for _, slot := range slices.Sorted(maps.Keys(bySlot)) {
			if slot < oldest {
				delete(bySlot, slot)
				continue
			}
			doc.Added[id] = append(doc.Added[id], [2]int64{slot, bySlot[slot]})
		}
		if len(bySlot) == 0 {
			delete(n.added, id)
		}
	}
	return doc
}

// countOthers sets what the other fronts' ledgers hold on each node that
// this front's own accounting does not (see the file's comment).
func (n *Nodes) countOthers(others []ledgerDoc, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	from := slotOf(n.countedAt)
	sum := map[string]int64{}
	for _, doc := range others {
		if now.Sub(doc.Written) <= ledgerFresh {
			for id, bytes := range doc.Pending {
				sum[id] += max(0, bytes)
			}
		}
		for id, entries := range doc.Added {
			for _, e := range entries {
				if e[0] >= from {
					sum[id] += max(0, e[1])
				}
			}
		}
	}
	n.others = sum
}

// shareLedger writes this front's ledger and counts the others' (at every
// health check); the maintainer also deletes ledgers of fronts gone for
// ledgerKeep. It answers how many fronts wrote their ledger within
// ledgerFresh, this one included: the fronts serving now.
func (b *Backend) shareLedger(ctx context.Context) int {
	now := time.Now()
	folder := b.prefix + ledgerFolder
	own, err := json.Marshal(b.nodes.ownLedger(now))
	if err == nil {
		_, err = b.kv.Txn(ctx, []kv.Op{{Verb: kv.Set, Key: folder + b.frontID, Value: own}})
	}
	b.warnEpisode("ledger-write", err, "could not write this front's ledger; the other fronts count its writes at their next scan")
	pairs, err := b.kv.List(ctx, folder)
	b.warnEpisode("ledger-read", err, "could not read the other fronts' ledgers; their writes count at the next scan")
	if err != nil {
		return 0
	}
	var others []ledgerDoc
	fronts := 1 // this one
	for _, p := range pairs {
		if strings.TrimPrefix(p.Key, folder) == b.frontID {
			continue
		}
		var doc ledgerDoc
		err := json.Unmarshal(p.Value, &doc)
		if b.warnEpisode("ledger-corrupt:"+p.Key, err, "skipping another front's ledger that does not decode", "key", p.Key); err != nil {
			continue
		}
		if now.Sub(doc.Written) > ledgerKeep && !b.follower.Load() {
			_, _ = b.kv.DeleteCAS(ctx, p.Key, p.Index) // a front gone for long: its commits are counted by every scan since
			continue
		}
		others = append(others, doc)
		if now.Sub(doc.Written) <= ledgerFresh {
			fronts++
		}
	}
	b.nodes.countOthers(others, now)
	b.metrics.fronts.Set(float64(fronts))
	b.frontsSeen.Store(int64(fronts))
	return fronts
}

// warnEpisode logs msg (with err) when err begins an episode of failures
// of what flag names, and ends the episode when err is nil; it returns err.
func (b *Backend) warnEpisode(flag string, err error, msg string, args ...any) error {
	if err == nil {
		b.episodes.Delete(flag)
		return nil
	}
	if _, seen := b.episodes.LoadOrStore(flag, true); !seen {
		b.log.Warn(msg, append(args, "error", err)...)
	}
	return err
}

// newFrontID names this front's ledger: random, so a restarted front starts
// a ledger of its own and the old one ages out.
func newFrontID() string {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}
