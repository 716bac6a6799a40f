// Package storagesim simulates a year of a harvested file system
// (history-based-harvesting.txt, Section 6, "Simulator"): blocks written
// over time, disks reimaged by their primary tenants (the synthetic
// generator's model, correlated mass reimages included), lost replicas
// re-created at a per-server rate, and placement by either the stock HDFS
// policy or Algorithm 2, the very storage/grid code the blob tier runs. A
// block is lost when its last replica is reimaged before repair.
package storagesim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/storage/grid"
)

// Policy is a replica placement policy.
type Policy string

const (
	// Stock is HDFS's default: the writer's server, another server in its
	// rack, one in a remote rack (further replicas anywhere else).
	Stock Policy = "stock"
	// Grid is Algorithm 2.
	Grid Policy = "grid"
)

// Config says what to simulate.
type Config struct {
	Seed          uint64
	Policy        Policy
	Replicas      int
	Blocks        int           // written uniformly over the span
	Span          time.Duration // default one year
	RepairPerHour float64       // re-created replicas per hour per reimaged server (paper: 30)
	RackSize      int           // servers per rack (default 20)
}

// Result is what one run measured.
type Result struct {
	Policy      Policy `json:"policy"`
	Replicas    int    `json:"replicas"`
	Blocks      int    `json:"blocks"`
	Lost        int    `json:"lost_blocks"`
	Reimages    int    `json:"reimages"`
	Repairs     int    `json:"repairs"`
	Degraded    int    `json:"degraded_placements"`
	Servers     int    `json:"servers"`
	TenantCount int    `json:"tenants"`
}

// LostShare is the share of blocks lost.
func (r Result) LostShare() float64 { return float64(r.Lost) / float64(max(1, r.Blocks)) }

type event struct {
	at    time.Time
	kind  int // 0 reimage, 1 write, 2 repair done
	node  int
	block int
	seq   int
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if !e[i].at.Equal(e[j].at) {
		return e[i].at.Before(e[j].at)
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

type server struct {
	id, tenant, rack string
}

// Run simulates dc under cfg; progress (may be nil) is told how far it is.
func Run(dc synth.Datacenter, cfg Config, progress func(done, total int)) (Result, error) {
	if cfg.Span == 0 {
		cfg.Span = 365 * 24 * time.Hour
	}
	if cfg.RackSize == 0 {
		cfg.RackSize = 20
	}
	if cfg.Replicas < 1 || cfg.RepairPerHour <= 0 {
		return Result{}, fmt.Errorf("replicas must be at least 1 and the repair rate positive")
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	w := buildWorld(dc, cfg.RackSize)
	servers, index, g, byRack := w.servers, w.index, w.grid, w.byRack
	place := placer{cfg: cfg, rng: rng, g: g, servers: servers, index: index, byRack: byRack}

	q := &events{}
	seq := 0
	push := func(e event) { e.seq = seq; seq++; heap.Push(q, e) }
	start := dc.Profile.Start
	for _, t := range dc.Tenants {
		for _, r := range t.Reimages {
			if r.Time.Sub(start) < cfg.Span {
				push(event{at: r.Time, kind: 0, node: index[r.Node]})
			}
		}
	}
	for b := 0; b < cfg.Blocks; b++ {
		push(event{at: start.Add(time.Duration(rng.Float64() * float64(cfg.Span))), kind: 1, block: b})
	}

	res := Result{Policy: cfg.Policy, Replicas: cfg.Replicas, Blocks: cfg.Blocks, Servers: len(servers), TenantCount: len(dc.Tenants)}
	replicas := make([][]int, cfg.Blocks) // live replicas of each block
	lost := make([]bool, cfg.Blocks)
	onNode := make([]map[int]bool, len(servers))
	for i := range onNode {
		onNode[i] = map[int]bool{}
	}
	total := q.Len()
	for done := 0; q.Len() > 0; done++ {
		e := heap.Pop(q).(event)
		if progress != nil && done%4096 == 0 {
			progress(done, total)
		}
		switch e.kind {
		case 1: // a write
			nodes, degraded := place.initial(rng.IntN(len(servers)))
			if degraded {
				res.Degraded++
			}
			replicas[e.block] = nodes
			for _, n := range nodes {
				onNode[n][e.block] = true
			}
		case 0: // a reimage wipes the server's disk
			res.Reimages++
			blocks := make([]int, 0, len(onNode[e.node]))
			for b := range onNode[e.node] {
				blocks = append(blocks, b)
			}
			sort.Ints(blocks) // deterministic order
			onNode[e.node] = map[int]bool{}
			for k, b := range blocks {
				replicas[b] = slices.DeleteFunc(replicas[b], func(n int) bool { return n == e.node })
				if len(replicas[b]) == 0 {
					if !lost[b] {
						lost[b] = true
						res.Lost++
					}
					continue
				}
				delay := time.Duration(float64(k+1) / cfg.RepairPerHour * float64(time.Hour))
				push(event{at: e.at.Add(delay), kind: 2, block: b})
			}
		case 2: // a repair re-creates one replica, around the survivors
			if lost[e.block] || len(replicas[e.block]) >= cfg.Replicas || len(replicas[e.block]) == 0 {
				continue
			}
			if n, ok := place.repair(replicas[e.block]); ok {
				replicas[e.block] = append(replicas[e.block], n)
				onNode[n][e.block] = true
				res.Repairs++
			}
		}
	}
	if progress != nil {
		progress(total, total)
	}
	return res, nil
}

// world is the datacenter as the placement policies see it.
type world struct {
	servers  []server
	index    map[string]int // server ID -> position
	tenantOf []int          // server position -> tenant position in the datacenter
	grid     *grid.Grid
	byRack   map[string][]int
}

// buildWorld lays the datacenter's servers into racks of rackSize (servers
// of a tenant are neighbours, as a tenant's machines usually are) and
// builds Algorithm 2's grid over its tenants.
func buildWorld(dc synth.Datacenter, rackSize int) world {
	w := world{index: map[string]int{}, byRack: map[string][]int{}}
	var tenants []*grid.Tenant
	for ti, t := range dc.Tenants {
		gt := &grid.Tenant{ID: t.ID.String(), Environment: t.ID.Environment, ReimageRate: t.ReimageRate, PeakCPU: peak(t.Series.Values)}
		for _, n := range t.Nodes {
			s := server{id: n, tenant: gt.ID, rack: fmt.Sprintf("rack-%d", len(w.servers)/rackSize)}
			w.index[n] = len(w.servers)
			w.byRack[s.rack] = append(w.byRack[s.rack], len(w.servers))
			w.servers = append(w.servers, s)
			w.tenantOf = append(w.tenantOf, ti)
			gt.Nodes = append(gt.Nodes, &grid.Node{ID: n, Tenant: gt.ID, Rack: s.rack, Free: 1 << 50})
		}
		tenants = append(tenants, gt)
	}
	w.grid = grid.Build(tenants)
	return w
}

// peak is the 95th percentile of a series.
func peak(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(0.95*float64(len(s))))]
}
