package front

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// TestSetNodesAddsRemovesAndBringsBack: a node a reloaded configuration
// adds is checked and used; one it drops is kept down (though it still
// answers), lost after lost_after, and its replicas re-created elsewhere;
// listed again, it comes back with its marker.
func TestSetNodesAddsRemovesAndBringsBack(t *testing.T) {
	ctx := context.Background()
	mem := kv.NewMem()
	stores, cfgs := memNodes(t)
	reg := nodes.NewRegistry(mem, "harvest/")
	b, _ := frontOver(t, mem, cfgs[:3])
	b.health.CheckNodes(ctx, reg, time.Hour)
	makeBucket(t, b, "data", nil)
	data := bytes.Repeat([]byte("reload "), 500)
	if err := putBytes(t, b, "data", "k", data); err != nil {
		t.Fatal(err)
	}
	added := cfgs[3].ID
	if ch, err := b.SetNodes(cfgs, nil); err != nil || !slices.Equal(ch.Added, []string{added}) || len(ch.Changed)+len(ch.Removed) != 0 {
		t.Fatalf("add: %+v %v", ch, err)
	}
	if b.nodes.Up(added) {
		t.Fatal("a new node is used before its health check")
	}
	b.health.CheckNodes(ctx, reg, time.Hour)
	if !b.nodes.Up(added) || markerOn(stores[added]) == "" {
		t.Fatalf("the added node: up %v, marker %q", b.nodes.Up(added), markerOn(stores[added]))
	}
	if ch, err := b.SetNodes(cfgs, nil); err != nil || !ch.Empty() {
		t.Fatalf("the same list again changed %+v (%v)", ch, err)
	}

	e, _ := b.cat.Get(ctx, "data", "k")
	gone := e.Replicas[0].Node
	var rest []nodes.Config
	for _, c := range cfgs {
		if c.ID != gone {
			rest = append(rest, c)
		}
	}
	if ch, err := b.SetNodes(rest, nil); err != nil || !slices.Equal(ch.Removed, []string{gone}) {
		t.Fatalf("remove: %+v %v", ch, err)
	}
	b.health.CheckNodes(ctx, reg, time.Hour) // down, not yet lost
	if b.nodes.Up(gone) {
		t.Fatal("a removed node that still answers is used")
	}
	if e, _ := b.cat.Get(ctx, "data", "k"); !e.HasReplicaOn(gone) {
		t.Fatal("a removed node's replicas were forgotten before lost_after")
	}
	b.health.CheckNodes(ctx, reg, time.Nanosecond) // lost
	if err := b.upkeep.RepairScan(ctx); err != nil {
		t.Fatal(err)
	}
	e, _ = b.cat.Get(ctx, "data", "k")
	if len(e.Replicas) != 3 || e.HasReplicaOn(gone) {
		t.Fatalf("after the removed node was lost: %+v", e.Replicas)
	}
	st := b.Status()
	for _, n := range st.Nodes {
		if n.ID == gone && (!n.Removed || n.Up) {
			t.Fatalf("status of the removed node: %+v", n)
		}
	}
	if got := getBytes(t, b, "data", "k"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes", len(got))
	}

	marker := markerOn(stores[gone])
	if ch, err := b.SetNodes(cfgs, nil); err != nil || !slices.Equal(ch.Changed, []string{gone}) {
		t.Fatalf("listed again: %+v %v", ch, err)
	}
	b.health.CheckNodes(ctx, reg, time.Hour)
	if !b.nodes.Up(gone) || markerOn(stores[gone]) != marker {
		t.Fatalf("listed again: up %v, marker %q -> %q", b.nodes.Up(gone), marker, markerOn(stores[gone]))
	}
	if _, err := b.SetNodes(append(cfgs, cfgs[0]), nil); err == nil {
		t.Fatal("a node listed twice was taken")
	}
}
