package nodes

// Fronts share what each writes (ledger): a node's room must hold across
// every front serving the tier, or two fronts could each admit a write
// that only one fits, and a front would learn what another committed only
// at its next full catalogue scan (repair.scan_interval, an hour by
// default), filling a node past its owner's declared capacity in between.
//
// At every health check each front writes its ledger (OwnLedger) to
// <prefix>blob/fronts/<id> (storage/health/ledger.go): the bytes it has in
// flight on each node (pending: writes being streamed, open uploads'
// parts) and the bytes it committed to each node, by LedgerSlot, over the
// last LedgerKeep. It then reads the other fronts' ledgers and counts
// (CountOthers), on each node, their pending bytes (while their ledger is
// fresher than LedgerFresh: a front that died has no writes in flight) and
// what they committed from the slot in which its own last scan began (what
// that scan did not count; a commit within that slot may be counted twice,
// which only refuses a write a little early). Deletes are not shared: they
// leave orphans on the node until the collector deletes them, so counting
// them late errs on the safe side too.
//
// The maintainer deletes ledgers not written for LedgerKeep (fronts that
// are gone).

import (
	"maps"
	"slices"
	"time"
)

const (
	// LedgerFresh is how long a front's pending bytes count after it last
	// wrote its ledger (health checks run every 5 s by default).
	LedgerFresh = time.Minute
	// LedgerKeep is how long a front keeps what it committed in its ledger,
	// and how long after its last write the maintainer deletes it: longer
	// than the default repair.scan_interval, after which every front's own
	// scan counts those bytes.
	LedgerKeep = 2 * time.Hour
	// LedgerSlot is the time slot of the commits a ledger lists: with 24
	// slots in LedgerKeep a ledger stays far below Consul's 512 KiB value
	// limit even with hundreds of nodes.
	LedgerSlot = 5 * time.Minute
)

// slotOf is the ledger slot of a time.
func slotOf(t time.Time) int64 { return t.Unix() / int64(LedgerSlot/time.Second) }

// Ledger is one front's ledger.
type Ledger struct {
	Written time.Time             `json:"written"`
	Pending map[string]int64      `json:"pending,omitempty"` // node -> bytes in flight
	Added   map[string][][2]int64 `json:"added,omitempty"`   // node -> [slot (unix seconds / 300), bytes committed in it]
}

// noteAdded records bytes this front committed to nodes now (p.mu held).
func (p *Pool) noteAdded(ids []string, size int64, now time.Time) {
	slot := slotOf(now)
	if p.added == nil {
		p.added = map[string]map[int64]int64{}
	}
	for _, id := range ids {
		bySlot := p.added[id]
		if bySlot == nil {
			bySlot = map[int64]int64{}
			p.added[id] = bySlot
		}
		bySlot[slot] += size
	}
}

// OwnLedger is this front's ledger now, dropping what it committed before
// LedgerKeep.
func (p *Pool) OwnLedger(now time.Time) Ledger {
	p.mu.Lock()
	defer p.mu.Unlock()
	doc := Ledger{Written: now.UTC(), Pending: map[string]int64{}, Added: map[string][][2]int64{}}
	oldest := slotOf(now.Add(-LedgerKeep))
	for id, s := range p.space {
		if s.pending > 0 {
			doc.Pending[id] = s.pending
		}
	}
	for id, bySlot := range p.added {
		for _, slot := range slices.Sorted(maps.Keys(bySlot)) {
			if slot < oldest {
				delete(bySlot, slot)
				continue
			}
			doc.Added[id] = append(doc.Added[id], [2]int64{slot, bySlot[slot]})
		}
		if len(bySlot) == 0 {
			delete(p.added, id)
		}
	}
	return doc
}

// CountOthers sets what the other fronts' ledgers hold on each node that
// this front's own accounting does not (see the file's comment).
func (p *Pool) CountOthers(others []Ledger, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := slotOf(p.countedAt)
	sum := map[string]int64{}
	for _, doc := range others {
		if now.Sub(doc.Written) <= LedgerFresh {
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
	p.others = sum
}
