package packing

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTiersAndOrder(t *testing.T) {
	c := Default()
	nodes := []Node{
		{ID: "empty1", Capacity: 100},
		{ID: "busy90", Used: 90, Capacity: 100},
		{ID: "half", Used: 50, Capacity: 100},
		{ID: "tenth", Used: 10, Capacity: 100},
		{ID: "busy70", Used: 70, Capacity: 100},
		{ID: "empty2", Capacity: 100},
	}
	if c.TierOf(nodes[1]) != High || c.TierOf(nodes[2]) != Medium || c.TierOf(nodes[0]) != Low {
		t.Fatal("tiers wrong")
	}
	order, on := c.Order(nodes)
	// medium fuller first, then low, then high emptier first
	if !on || strings.Join(order, ",") != "half,tenth,empty1,empty2,busy70,busy90" {
		t.Fatalf("order %v (on %v)", order, on)
	}
	if _, on := c.Order(nodes[:4]); on {
		t.Fatal("packing on below the minimum cluster size")
	}
	if AffinityWeight(Medium) <= AffinityWeight(Low) || AffinityWeight(Low) <= AffinityWeight(High) {
		t.Fatal("affinity weights do not rank medium > low > high")
	}
}

func TestReleasableNodesHaveBeenEmptyLongEnough(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	nodes := []Node{
		{ID: "a", EmptySince: now.Add(-2 * time.Hour)},
		{ID: "b", EmptySince: now.Add(-5 * time.Minute)},
		{ID: "c", Used: 1, EmptySince: now.Add(-3 * time.Hour)},
		{ID: "d", EmptySince: now.Add(-3 * time.Hour)},
	}
	got := Releasable(nodes, now, 30*time.Minute)
	if len(got) != 2 || got[0].ID != "d" || got[1].ID != "a" {
		t.Fatalf("releasable %+v", got)
	}
}

// TestPackingFreesNodes replays the source's example: 20 containers with an
// 80% threshold on nodes that hold 10 each end up as two nodes of eight and
// one of four, the rest empty (spread, every node would run two).
func TestPackingFreesNodes(t *testing.T) {
	c := Config{HighThreshold: 0.8, MinNodes: 5}
	nodes := make([]Node, 10)
	for i := range nodes {
		nodes[i] = Node{ID: string(rune('a' + i)), Capacity: 10}
	}
	for k := 0; k < 20; k++ {
		order, _ := c.Order(nodes)
		for _, id := range order {
			n := &nodes[id[0]-'a']
			if n.Used < n.Capacity {
				n.Used++
				break
			}
		}
	}
	var used []string
	empty := 0
	for _, n := range nodes {
		if n.Used == 0 {
			empty++
		} else {
			used = append(used, fmt.Sprint(n.Used))
		}
	}
	if strings.Join(used, ",") != "8,8,4" || empty != 7 {
		t.Fatalf("packed as %v with %d empty nodes, want 8,8,4 and 7 empty", used, empty)
	}
}

// TestFirstIsOrdersFirstFit: on random pools, First picks the node Order
// lists first among those that fit.
func TestFirstIsOrdersFirstFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := Default()
	for trial := 0; trial < 2000; trial++ {
		nodes := make([]Node, 1+rng.IntN(12))
		for i, k := range rng.Perm(len(nodes)) {
			// few distinct loads, so ties on tier and share are common
			nodes[i] = Node{ID: fmt.Sprintf("n%02d", k), Used: float64(rng.IntN(5)), Capacity: float64(4 + rng.IntN(2))}
		}
		need := float64(rng.IntN(4))
		fits := func(i int) bool { return nodes[i].Used+need <= nodes[i].Capacity }
		got, on := c.First(nodes, fits)
		order, onOrder := c.Order(nodes)
		if on != onOrder {
			t.Fatalf("First on %v, Order on %v", on, onOrder)
		}
		if !on {
			continue
		}
		want := -1
		for _, id := range order {
			i := slices.IndexFunc(nodes, func(n Node) bool { return n.ID == id })
			if fits(i) {
				want = i
				break
			}
		}
		if got != want {
			t.Fatalf("nodes %+v need %v: First %d, Order's first fit %d (order %v)", nodes, need, got, want, order)
		}
	}
}
