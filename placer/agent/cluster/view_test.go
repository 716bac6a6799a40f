package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/nomadtest"
)

func TestNodeCacheReadsOnlyChangedNodes(t *testing.T) {
	fake := &nomadtest.CountingNomad{Index: map[string]uint64{"n1": 5, "n2": 7}}
	client := nomadtest.Serve(t, fake)
	view := New(client)
	pass := func() int {
		t.Helper()
		before := fake.NodeReads()
		nodes, err := view.HarvestedNodes(context.Background())
		if err != nil || len(nodes) != 2 || !nodes[0].Ready {
			t.Fatalf("nodes %+v, %v", nodes, err)
		}
		return fake.NodeReads() - before
	}
	if n := pass(); n != 2 {
		t.Fatalf("first pass read %d nodes, want 2", n)
	}
	if n := pass(); n != 0 {
		t.Fatalf("an unchanged cluster cost %d node reads, want 0", n)
	}
	fake.Mu.Lock()
	fake.Index["n2"] = 9 // e.g. its meta changed
	fake.Mu.Unlock()
	if n := pass(); n != 1 {
		t.Fatalf("one changed node cost %d reads, want 1", n)
	}
}

// The room device's core MHz is the least the harvest driver's nodes
// publish (a node without the driver does not count), read again only
// after coreMHzTTL.
func TestCoreMHzIsTheLeastOfTheDriversNodes(t *testing.T) {
	fake := &nomadtest.CountingNomad{Index: map[string]uint64{"n1": 1, "n2": 1, "n3": 1},
		Meta: map[string]map[string]string{"n1": {}, "n2": {}, "n3": {}}, CoreMHz: map[string]string{"n1": "2095", "n2": "1800"}}
	client := nomadtest.Serve(t, fake)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCoreMHz(New(client), func() time.Time { return now })
	if got, err := c.CoreMHz(context.Background()); err != nil || got != 1800 {
		t.Fatalf("core MHz %v, %v: want 1800", got, err)
	}
	fake.Mu.Lock()
	fake.CoreMHz["n2"], fake.Index["n2"] = "2500", 2
	fake.Mu.Unlock()
	if got, _ := c.CoreMHz(context.Background()); got != 1800 {
		t.Fatalf("within the TTL: %v, want the 1800 read before", got)
	}
	now = now.Add(coreMHzTTL)
	if got, _ := c.CoreMHz(context.Background()); got != 2095 {
		t.Fatalf("after the TTL: %v, want 2095 (n2 now 2500)", got)
	}
}

func TestAppliedMetaOverlaysUntilTheServerShowsIt(t *testing.T) {
	a := &appliedMeta{nodes: map[string]map[string]string{}}
	a.record("n1", map[string]string{"tier": "medium"}, []string{"gone"})
	got := a.overlay("n1", map[string]string{"tier": "low", "gone": "x", "other": "y"})
	if got["tier"] != "medium" || got["gone"] != "" || got["other"] != "y" {
		t.Fatalf("overlay %v", got)
	}
	// the server catches up: the overlay forgets, and later server changes show
	a.overlay("n1", map[string]string{"tier": "medium"})
	if got := a.overlay("n1", map[string]string{"tier": "high", "gone": "back"}); got["tier"] != "high" || got["gone"] != "back" {
		t.Fatalf("after catching up on tier: %v", got)
	}
}

// Under room_placement = "auto" the core MHz is 0 (the proxy writes the CPU
// rule) while one node the harvest driver runs on does not offer the
// harvest-room device, and the least core MHz once every one does; a node
// without the driver, or down, does not count.
func TestAutoRoomDeviceNeedsEveryDriversNodeToOfferIt(t *testing.T) {
	fake := &nomadtest.CountingNomad{Index: map[string]uint64{"n1": 1, "n2": 1, "n3": 1, "n4": 1},
		Meta: map[string]map[string]string{"n1": {}, "n2": {}, "n3": {}, "n4": {}}, CoreMHz: map[string]string{"n1": "2095", "n2": "1800", "n4": "1500"},
		RoomDevice: map[string]bool{"n1": true}, Down: map[string]bool{"n4": true}}
	client := nomadtest.Serve(t, fake)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCoreMHz(New(client), func() time.Time { return now })
	c.RequireDevice = true
	if got, err := c.CoreMHz(context.Background()); err != nil || got != 0 {
		t.Fatalf("n2 without the device: %v, %v; want 0 (the CPU rule)", got, err)
	}
	fake.Mu.Lock()
	fake.RoomDevice["n2"], fake.Index["n2"] = true, 2
	fake.Mu.Unlock()
	now = now.Add(coreMHzTTL)
	if got, _ := c.CoreMHz(context.Background()); got != 1800 {
		t.Fatalf("every driver's node with the device (n3 has no driver, n4 is down): %v, want 1800", got)
	}
}
