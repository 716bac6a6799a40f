package storagesim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/harvest-platform/harvest/storage/grid"
)

// Policy is a replica placement policy.
type Policy string

const (
	// Stock is HDFS's default (history-based-harvesting.txt, Section 5):
	// the writer's server, another server of its rack, one in a remote rack;
	// further replicas anywhere else.
	Stock Policy = "stock"
	// Grid is Algorithm 2, run by the storage/grid code the blob tier uses.
	Grid Policy = "grid"
)

// ParsePolicy reads "stock" or "grid".
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Stock, Grid:
		return p, nil
	}
	return "", fmt.Errorf("policy %q: want stock or grid", s)
}

// Writers says who writes blocks.
type Writers string

const (
	// NodeWriters: a random storage server writes each block, and
	// Algorithm 2 puts the first replica on it (lines 6-7), as HDFS does for
	// a writer on a DataNode. The paper's setup.
	NodeWriters Writers = "node"
	// ClientWriters: writers are not storage servers, as the blob front's
	// S3 clients are not, so Algorithm 2 picks every replica (and, with
	// HourCandidates, steers each one after the first). HDFS's stock
	// placement starts an off-cluster writer's block on a random server,
	// which is what a random writing server gives it already.
	ClientWriters Writers = "client"
)

// ParseWriters reads "node" or "client" ("" is node).
func ParseWriters(s string) (Writers, error) {
	switch w := Writers(s); w {
	case "":
		return NodeWriters, nil
	case NodeWriters, ClientWriters:
		return w, nil
	}
	return "", fmt.Errorf("writers %q: want node or client", s)
}

// placer places the replicas of blocks by one policy. Servers are positions
// in the world.
type placer struct {
	policy   Policy
	writers  Writers
	replicas int
	rng      *rand.Rand
	w        *world
	existing []string // scratch for grid repairs
	// capacity is how many replicas a server holds at most (0: no limit);
	// used, how many each holds.
	capacity int32
	used     []int32
}

// full says a server has no room for another replica (or is out of
// service).
func (p *placer) full(server int32) bool {
	return p.capacity > 0 && p.used[server] >= p.capacity || p.w.absent[server]
}

// initial places a new block written by server writer; degraded says the
// grid had to relax a diversity rule. It returns nil when fewer than R
// servers have room.
func (p *placer) initial(writer int32) (servers []int32, degraded bool) {
	if p.policy == Grid { // Algorithm 2, lines 6-18
		req := grid.Request{Size: 1, Replicas: p.replicas, Writer: p.w.id[writer]}
		if p.writers == ClientWriters {
			req.Writer = ""
		}
		pl, err := p.w.grid.Place(req, p.rng)
		if err != nil { // no room left anywhere
			return nil, false
		}
		out := make([]int32, len(pl.Nodes))
		for i, n := range pl.Nodes {
			out[i] = p.w.index[n]
		}
		return out, pl.Degraded
	}
	if p.full(writer) { // HDFS then starts on a random server
		if writer = p.anywhere(nil); writer < 0 {
			return nil, false
		}
	}
	out := []int32{writer}
	for len(out) < p.replicas {
		var next int32
		switch len(out) {
		case 1: // another server of the writer's rack
			next = p.inRack(p.w.rackOf[writer], out)
		case 2: // a server of a remote rack
			next = p.outsideRack(p.w.rackOf[writer], out)
		default:
			next = p.anywhere(out)
		}
		if next < 0 {
			return nil, false
		}
		out = append(out, next)
	}
	return out, false
}

// repair picks a server for one missing replica of a block around its
// survivors.
func (p *placer) repair(survivors []int32) (int32, bool) {
	if p.policy == Grid { // Algorithm 2 with the survivors' rows, columns and environments taken, as the blob repairer asks it
		p.existing = p.existing[:0]
		for _, s := range survivors {
			p.existing = append(p.existing, p.w.id[s])
		}
		pl, err := p.w.grid.Place(grid.Request{Size: 1, Replicas: 1, Existing: p.existing}, p.rng)
		if err != nil || len(pl.Nodes) == 0 {
			return 0, false
		}
		return p.w.index[pl.Nodes[0]], true
	}
	// HDFS re-replication (BlockPlacementPolicyDefault): one survivor, or two
	// in one rack, get a replica in a remote rack; two in different racks, a
	// replica in the first survivor's rack; more, a random server.
	first := p.w.rackOf[survivors[0]]
	var next int32
	switch {
	case len(survivors) == 1 || len(survivors) == 2 && p.w.rackOf[survivors[1]] == first:
		next = p.outsideRack(first, survivors)
	case len(survivors) == 2:
		next = p.inRack(first, survivors)
	default:
		next = p.anywhere(survivors)
	}
	return next, next >= 0
}

// inRack picks a random server of rack with room that holds no replica
// yet (one anywhere when the rack has none left).
func (p *placer) inRack(rack int32, taken []int32) int32 {
	cands := p.w.racks[rack]
	for try := 0; try < 8*len(cands); try++ {
		if c := cands[p.rng.IntN(len(cands))]; !slices.Contains(taken, c) && !p.full(c) {
			return c
		}
	}
	return p.anywhere(taken)
}

// outsideRack picks a random server outside rack with room that holds no
// replica (one anywhere when none is found).
func (p *placer) outsideRack(rack int32, taken []int32) int32 {
	n := len(p.w.id)
	for try := 0; try < 1000; try++ {
		if c := int32(p.rng.IntN(n)); p.w.rackOf[c] != rack && !slices.Contains(taken, c) && !p.full(c) {
			return c
		}
	}
	return p.anywhere(taken)
}

// anywhere picks a random server with room that holds no replica (after
// many misses, the first such server in order; -1 when there is none).
func (p *placer) anywhere(taken []int32) int32 {
	n := len(p.w.id)
	for try := 0; try < 1000; try++ {
		if c := int32(p.rng.IntN(n)); !slices.Contains(taken, c) && !p.full(c) {
			return c
		}
	}
	for c := int32(0); c < int32(n); c++ {
		if !slices.Contains(taken, c) && !p.full(c) {
			return c
		}
	}
	return -1
}
