package storagesim

import (
	"math/rand/v2"
	"slices"

	"github.com/harvest-platform/harvest/storage/grid"
)

// placer places replicas by the configured policy.
type placer struct {
	cfg     Config
	rng     *rand.Rand
	g       *grid.Grid
	servers []server
	index   map[string]int
	byRack  map[string][]int
}

// initial places a new block written by server w.
func (p *placer) initial(w int) ([]int, bool) {
	if p.cfg.Policy == Grid {
		pl, err := p.g.Place(grid.Request{Size: 1, Replicas: p.cfg.Replicas, Writer: p.servers[w].id}, p.rng)
		if err != nil {
			return nil, false
		}
		return p.ids(pl.Nodes), pl.Degraded
	}
	nodes := []int{w}
	for len(nodes) < p.cfg.Replicas {
		switch len(nodes) {
		case 1: // another server in the writer's rack
			nodes = append(nodes, p.pickRack(p.servers[w].rack, nodes, true))
		case 2: // a server in a remote rack
			nodes = append(nodes, p.pickRack(p.servers[w].rack, nodes, false))
		default:
			nodes = append(nodes, p.pickAny(nodes))
		}
	}
	return nodes, false
}

// repair picks a server for one missing replica of a block.
func (p *placer) repair(survivors []int) (int, bool) {
	if p.cfg.Policy == Grid {
		var existing []string
		for _, s := range survivors {
			existing = append(existing, p.servers[s].id)
		}
		pl, err := p.g.Place(grid.Request{Size: 1, Replicas: 1, Existing: existing}, p.rng)
		if err != nil || len(pl.Nodes) == 0 {
			return 0, false
		}
		return p.index[pl.Nodes[0]], true
	}
	// HDFS re-replication: keep the block on at least two racks
	racks := map[string]bool{}
	for _, s := range survivors {
		racks[p.servers[s].rack] = true
	}
	if len(racks) == 1 {
		return p.pickRack(p.servers[survivors[0]].rack, survivors, false), true
	}
	return p.pickAny(survivors), true
}

// pickRack picks a random server in (same) or outside (!same) rack that
// holds no replica yet.
func (p *placer) pickRack(rack string, taken []int, same bool) int {
	if same {
		cands := p.byRack[rack]
		for try := 0; try < 8*len(cands); try++ {
			if c := cands[p.rng.IntN(len(cands))]; !slices.Contains(taken, c) {
				return c
			}
		}
		return p.pickAny(taken) // a rack of one server
	}
	for try := 0; try < 1000; try++ {
		if c := p.rng.IntN(len(p.servers)); p.servers[c].rack != rack && !slices.Contains(taken, c) {
			return c
		}
	}
	return p.pickAny(taken)
}

func (p *placer) pickAny(taken []int) int {
	for {
		if c := p.rng.IntN(len(p.servers)); !slices.Contains(taken, c) || len(taken) >= len(p.servers) {
			return c
		}
	}
}

func (p *placer) ids(nodes []string) []int {
	out := make([]int, len(nodes))
	for i, n := range nodes {
		out[i] = p.index[n]
	}
	return out
}
