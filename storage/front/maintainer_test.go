package front

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/health"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// markerOn is the identity marker a memory node holds ("" when none).
func markerOn(m *memNode) string { return string(m.get(health.MarkerObject)) }

// TestTwoFrontsFollowAReimagedNodeWithOneMaintainer: two fronts over the
// same catalogue and nodes, one of them the maintainer. When a node holding
// a replica is wiped, the standing-by front only stops using it; the
// maintainer drops its replicas once and gives it a new marker, which the
// other front adopts from the registry. The marker then stays put (two
// maintainers would each take the other's new marker for a reimage and
// drop the node's replicas over and over), and only the maintainer repairs.
func TestTwoFrontsFollowAReimagedNodeWithOneMaintainer(t *testing.T) {
	ctx := context.Background()
	mem := kv.NewMem()
	stores, cfgs := memNodes(t)
	reg := nodes.NewRegistry(mem, "harvest/")
	for _, c := range cfgs {
		if err := reg.Register(ctx, c.Node); err != nil {
			t.Fatal(err)
		}
	}
	maint, _ := frontOver(t, mem, cfgs)
	standby, _ := frontOver(t, mem, cfgs)
	standby.upkeep.SetMaintainer(false)
	if !maint.upkeep.Maintainer() || standby.upkeep.Maintainer() || !maint.Status().Maintainer || standby.Status().Maintainer {
		t.Fatal("maintainer flags not as set")
	}
	lostAfter := time.Hour
	standby.health.CheckNodes(ctx, reg, lostAfter) // nobody has a marker yet: the standby leaves them to the maintainer
	for id, m := range stores {
		if markerOn(m) != "" || standby.nodes.Up(id) {
			t.Fatalf("the standing-by front marked or used %s before the maintainer joined it", id)
		}
	}
	maint.health.CheckNodes(ctx, reg, lostAfter)
	standby.health.CheckNodes(ctx, reg, lostAfter)
	for id, m := range stores {
		if markerOn(m) == "" || !maint.nodes.Up(id) || !standby.nodes.Up(id) {
			t.Fatalf("%s: marker %q, up at the maintainer %v, at the other %v", id, markerOn(m), maint.nodes.Up(id), standby.nodes.Up(id))
		}
	}
	makeBucket(t, maint, "data", nil)
	data := bytes.Repeat([]byte("harvest "), 1000)
	if err := putBytes(t, standby, "data", "k", data); err != nil {
		t.Fatal(err)
	}
	e, _ := maint.cat.Get(ctx, "data", "k")
	if len(e.Replicas) != 3 {
		t.Fatalf("entry %+v", e)
	}
	wiped := e.Replicas[0].Node
	stores[wiped].mu.Lock()
	clear(stores[wiped].objects)
	stores[wiped].mu.Unlock()

	standby.health.CheckNodes(ctx, reg, lostAfter)
	if e, _ := maint.cat.Get(ctx, "data", "k"); len(e.Replicas) != 3 || standby.nodes.Up(wiped) || markerOn(stores[wiped]) != "" {
		t.Fatalf("the standing-by front acted on the wiped node: %d replicas named, up %v, marker %q",
			len(e.Replicas), standby.nodes.Up(wiped), markerOn(stores[wiped]))
	}
	maint.health.CheckNodes(ctx, reg, lostAfter)
	marker := markerOn(stores[wiped])
	if e, _ := maint.cat.Get(ctx, "data", "k"); len(e.Replicas) != 2 || e.HasReplicaOn(wiped) || marker == "" {
		t.Fatalf("the maintainer did not forget and re-mark the wiped node: %+v, marker %q", e, marker)
	}
	for round := 0; round < 3; round++ {
		standby.health.CheckNodes(ctx, reg, lostAfter)
		maint.health.CheckNodes(ctx, reg, lostAfter)
	}
	if got := markerOn(stores[wiped]); got != marker || !standby.nodes.Up(wiped) || !maint.nodes.Up(wiped) {
		t.Fatalf("marker %q -> %q, up at the maintainer %v, at the other %v", marker, got, maint.nodes.Up(wiped), standby.nodes.Up(wiped))
	}
	if err := standby.upkeep.RepairScan(ctx); err != nil {
		t.Fatal(err)
	}
	if e, _ := maint.cat.Get(ctx, "data", "k"); len(e.Replicas) != 2 || standby.Status().UnderReplicated != 1 {
		t.Fatalf("the standing-by front repaired (%d replicas) or did not count (%d under-replicated)", len(e.Replicas), standby.Status().UnderReplicated)
	}
	if err := maint.upkeep.RepairScan(ctx); err != nil {
		t.Fatal(err)
	}
	if e, _ := maint.cat.Get(ctx, "data", "k"); len(e.Replicas) != 3 {
		t.Fatalf("the maintainer did not repair: %+v", e)
	}
	if got := getBytes(t, standby, "data", "k"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes", len(got))
	}
}

// twoFronts are two fronts over one catalogue in memory and the same four
// nodes (declBackend's); both maintain until a test says otherwise.
func twoFronts(t *testing.T) (kv.KV, []nodes.Config, *Backend, *Backend) {
	t.Helper()
	mem := kv.NewMem()
	_, cfgs := memNodes(t)
	a, _ := frontOver(t, mem, cfgs)
	b, _ := frontOver(t, mem, cfgs)
	return mem, cfgs, a, b
}
