// Package packing is container packing for downscaling (container-packing.txt):
// nodes are tiered by how much harvested work they run — high (at or above
// HighThreshold of their harvestable capacity), medium (some), low (none) —
// and new harvested work goes to medium nodes first (the fuller first), then
// low, then high (the emptier first), so that low nodes drain and can be
// released. It is off below MinNodes. Pure: the placer turns the order into
// node meta and job affinities, the simulator measures node-hours.
package packing

import (
	"sort"
	"time"
)

// Tier is a node's packing tier.
type Tier string

const (
	High   Tier = "high"
	Medium Tier = "medium"
	Low    Tier = "low"
)

// Config holds the rule's settings (the source's defaults).
type Config struct {
	HighThreshold float64 // share of capacity above which a node is high (0.6)
	MinNodes      int     // packing is off for smaller clusters (5)
}

// Default returns the source's defaults.
func Default() Config { return Config{HighThreshold: 0.6, MinNodes: 5} }

// Node is a node's harvested usage.
type Node struct {
	ID         string
	Used       float64   // harvested work running (e.g. MB of memory allocated)
	Capacity   float64   // harvestable capacity in the same unit
	EmptySince time.Time // when it last became empty (zero if not empty)
}

// TierOf classifies one node.
func (c Config) TierOf(n Node) Tier {
	switch {
	case n.Used <= 0:
		return Low
	case n.Capacity > 0 && n.Used/n.Capacity >= c.HighThreshold:
		return High // at the threshold, as the source's example counts it
	}
	return Medium
}

// Order returns the node IDs in the order new work should try them, and
// false when packing is off (too few nodes).
func (c Config) Order(nodes []Node) ([]string, bool) {
	if len(nodes) < c.MinNodes {
		return nil, false
	}
	sorted := append([]Node(nil), nodes...)
	sort.SliceStable(sorted, func(i, j int) bool { return c.before(sorted[i], sorted[j]) })
	out := make([]string, len(sorted))
	for i, n := range sorted {
		out[i] = n.ID
	}
	return out, true
}

// First returns the index in nodes of the first node, in Order's order, for
// which ok(index) is true, or -1 when there is none; false when packing is
// off. It is Order's pick without sorting the pool: one pass, for callers
// that place one task at a time on many nodes.
func (c Config) First(nodes []Node, ok func(i int) bool) (int, bool) {
	if len(nodes) < c.MinNodes {
		return -1, false
	}
	best := -1
	for i := range nodes {
		if ok(i) && (best < 0 || c.before(nodes[i], nodes[best])) {
			best = i // strictly before: among equals the first stays, as in Order's stable sort
		}
	}
	return best, true
}

// before is Order's comparison: medium first (the fuller first, so the
// emptier medium nodes drain), then low, then high (the emptier first, to
// avoid hot spots), then by ID.
func (c Config) before(a, b Node) bool {
	ta, tb := c.TierOf(a), c.TierOf(b)
	if ta != tb {
		return tierRank(ta) < tierRank(tb)
	}
	switch ta {
	case Medium:
		if share(a) != share(b) {
			return share(a) > share(b)
		}
	case High:
		if share(a) != share(b) {
			return share(a) < share(b)
		}
	}
	return a.ID < b.ID
}

func tierRank(t Tier) int {
	switch t {
	case Medium:
		return 0
	case Low:
		return 1
	}
	return 2
}

func share(n Node) float64 {
	if n.Capacity <= 0 {
		return 0
	}
	return n.Used / n.Capacity
}

// AffinityWeight is the Nomad affinity weight (-100..100) the placer gives
// a tier, so the scheduler prefers medium, then low, then high nodes.
func AffinityWeight(t Tier) int {
	switch t {
	case Medium:
		return 100
	case Low:
		return 10
	}
	return -50
}

// Releasable returns the empty nodes that have been empty for at least d
// at now, longest first: candidates to scale in or give back.
func Releasable(nodes []Node, now time.Time, d time.Duration) []Node {
	var out []Node
	for _, n := range nodes {
		if n.Used <= 0 && !n.EmptySince.IsZero() && now.Sub(n.EmptySince) >= d {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EmptySince.Before(out[j].EmptySince) })
	return out
}
