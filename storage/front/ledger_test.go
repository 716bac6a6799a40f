package front

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// TestFrontsCountEachOthersWritesThroughTheirLedgers: two fronts over one
// catalogue and the same nodes. What front A commits and has in flight
// lowers front B's room on those nodes once both have shared their ledgers
// (a health check each), not only at B's next full scan; a scan of B that
// began after A's commits stops counting them again; A's pending bytes stop
// counting once its ledger is stale; the maintainer deletes the ledger of a
// front gone for nodes.LedgerKeep, and a ledger that does not decode is skipped.
func TestFrontsCountEachOthersWritesThroughTheirLedgers(t *testing.T) {
	ctx := context.Background()
	mem, cfgs, a, b := twoFronts(t)
	makeBucket(t, a, "data", nil)
	before := map[string]int64{}
	for _, c := range cfgs {
		before[c.ID] = b.nodes.Room(c.ID)
	}
	data := make([]byte, 1<<20)
	if err := putBytes(t, a, "data", "k", data); err != nil {
		t.Fatal(err)
	}
	e, err := a.cat.Get(ctx, "data", "k")
	if err != nil {
		t.Fatal(err)
	}
	holds := map[string]bool{}
	for _, r := range e.Replicas {
		holds[r.Node] = true
	}
	if n := a.health.ShareLedger(ctx); n != 1 {
		t.Fatalf("front A saw %d fronts, want itself only", n)
	}
	if n := b.health.ShareLedger(ctx); n != 2 || b.Status().Fronts != 2 {
		t.Fatalf("front B saw %d fronts (status %d), want both", n, b.Status().Fronts)
	}
	for _, c := range cfgs {
		want := before[c.ID]
		if holds[c.ID] {
			want -= int64(len(data))
		}
		if got := b.nodes.Room(c.ID); got != want {
			t.Errorf("node %s: front B's room %d after A's write, want %d", c.ID, got, want)
		}
	}

	// B scans the catalogue (which now lists A's object) from a slot after A's
	// commit: A's ledger no longer adds it, the scan does
	used := map[string]int64{}
	for id := range holds {
		used[id] = int64(len(data))
	}
	b.nodes.SetCommitted(used, time.Now().Add(nodes.LedgerSlot))
	b.health.ShareLedger(ctx)
	for id := range holds {
		if got := b.nodes.Room(id); got != before[id]-int64(len(data)) {
			t.Errorf("node %s after B's scan: room %d, want %d (counted once)", id, got, before[id]-int64(len(data)))
		}
	}

	// A write in flight on A counts on B while A's ledger is fresh
	var node string
	for id := range holds {
		node = id
		break
	}
	if !a.nodes.Reserve([]string{node}, 5<<20) {
		t.Fatal("no room for the reservation")
	}
	a.health.ShareLedger(ctx)
	b.health.ShareLedger(ctx)
	if got := b.nodes.Room(node); got != before[node]-int64(len(data))-5<<20 {
		t.Fatalf("node %s: B's room %d with A's 5 MiB in flight, want %d", node, got, before[node]-int64(len(data))-5<<20)
	}
	stale := a.nodes.OwnLedger(time.Now().Add(-2 * nodes.LedgerFresh))
	raw, _ := json.Marshal(stale)
	if _, err := mem.Txn(ctx, []kv.Op{{Verb: kv.Set, Key: a.health.LedgerKey(), Value: raw}}); err != nil {
		t.Fatal(err)
	}
	b.health.ShareLedger(ctx)
	if got := b.nodes.Room(node); got != before[node]-int64(len(data)) {
		t.Fatalf("node %s: B's room %d with A's ledger stale, want A's pending bytes no longer counted (%d)", node, got, before[node]-int64(len(data)))
	}

	// the maintainer deletes a ledger gone for nodes.LedgerKeep and skips a corrupt one
	gone, _ := json.Marshal(nodes.Ledger{Written: time.Now().Add(-nodes.LedgerKeep - time.Minute), Pending: map[string]int64{node: 1 << 30}})
	for key, value := range map[string][]byte{"gone": gone, "corrupt": []byte("{not json")} {
		if _, err := mem.Txn(ctx, []kv.Op{{Verb: kv.Set, Key: a.prefix + "blob/fronts/" + key, Value: value}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.health.ShareLedger(ctx); n != 1 {
		t.Fatalf("B saw %d fronts serving, want itself only (A's ledger stale, the gone one deleted, the corrupt one skipped)", n)
	}
	if _, index, _ := mem.Get(ctx, a.prefix+"blob/fronts/gone"); index != 0 {
		t.Fatal("the ledger of a front gone for nodes.LedgerKeep is still there")
	}
}
