// Package packsim simulates a pool of identical harvested nodes running a
// stream of batch tasks, to measure what container packing
// (container-packing.txt, placer/packing) saves: node-hours in use, where a
// node is in use from its first task until it has been empty for a release
// delay (the time a scaler waits before giving a node back). It owns the
// event loop, the baseline placements and the accounting; the packed order
// is placer/packing's own Config.Order, unchanged. No I/O: callers pass the
// tasks (Synthetic, FromAlibaba) and read the Result.
//
// The baselines are what a stock Nomad batch scheduler does. For a batch job
// Nomad shuffles the feasible nodes and scores only the first two (the power
// of two choices, scheduler/feasible/stack.go: limit 2 for batch), keeping
// the better score: with scheduler_algorithm "spread" the emptier of the two
// (Spread), with the default "binpack" the fuller (BinPack). Nomad's other
// score terms (job anti-affinity, skipping low scores) are left out. Tasks
// that fit on no node wait in one FIFO queue; the head blocks the rest.
package packsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// Task is one container to run.
type Task struct {
	Arrival  float64 // seconds from the workload's start
	Duration float64 // seconds
	Mem      float64 // MB
}

// Policy places a task on a node.
type Policy string

const (
	Spread  Policy = "spread"  // Nomad batch, scheduler_algorithm "spread": the emptier of two random feasible nodes
	BinPack Policy = "binpack" // Nomad batch, the default "binpack": the fuller of two random feasible nodes
	Packed  Policy = "packed"  // packing.Config.Order, the first node that fits (Spread when packing is off)
)

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Spread, BinPack, Packed:
		return p, nil
	}
	return "", fmt.Errorf("policy %q: want spread, binpack or packed", s)
}

// Config is one run's settings.
type Config struct {
	Seed         uint64
	Policy       Policy
	Nodes        int            // nodes in the pool
	NodeMem      float64        // harvestable memory per node, MB
	Packing      packing.Config // the packed policy's thresholds
	ReleaseDelay float64        // seconds a node stays in use after its last task ends
	Step         float64        // seconds between timeline samples; 0: no timeline
	Progress     func(done float64)
}

// Sample is the pool at one moment.
type Sample struct {
	Hours      float64 `json:"hours"` // since the first arrival
	InUse      int     `json:"in_use"`
	Releasable int     `json:"releasable"` // packing.Releasable's count: empty for at least the release delay
	Running    int     `json:"running"`
	Queued     int     `json:"queued"`
}

// Result is what one run measured.
type Result struct {
	Policy              Policy   `json:"policy"`
	Seed                uint64   `json:"seed"`
	Nodes               int      `json:"nodes"`
	Tasks               int      `json:"tasks"`         // run
	TooBig              int      `json:"tasks_too_big"` // larger than a node: dropped
	SpanHours           float64  `json:"span_hours"`    // first arrival to the last release
	NodeHours           float64  `json:"node_hours"`    // in use
	ReleasableNodeHours float64  `json:"releasable_node_hours"`
	MeanNodes           float64  `json:"mean_nodes_in_use"`
	PeakNodes           int      `json:"peak_nodes_in_use"`
	NodesTouched        int      `json:"nodes_ever_used"`
	MemUtilisation      float64  `json:"mem_utilisation"` // task MB-hours over the in-use nodes' MB-hours
	MeanWait            float64  `json:"mean_wait_seconds"`
	P90Wait             float64  `json:"p90_wait_seconds"`
	MaxWait             float64  `json:"max_wait_seconds"`
	Timeline            []Sample `json:"-"`
}

type node struct {
	id                     string
	used                   float64
	tasks                  int
	inUse, touched         bool
	inUseSince, emptySince float64
}

// sim is one run's state.
type sim struct {
	cfg      Config
	rng      *rand.Rand
	nodes    []node
	view     []packing.Node
	queue    []Task
	ev       *eventq.Queue[event]
	inUse    int
	running  int
	res      Result
	waits    []float64
	memHours float64
}

func newSim(cfg Config) *sim {
	s := &sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9ac5)), ev: eventq.New(eventOrder), nodes: make([]node, cfg.Nodes), view: make([]packing.Node, cfg.Nodes)}
	for i := range s.nodes {
		s.nodes[i] = node{id: fmt.Sprintf("n%06d", i), emptySince: -cfg.ReleaseDelay} // released before the start
	}
	s.res = Result{Policy: cfg.Policy, Seed: cfg.Seed, Nodes: cfg.Nodes}
	return s
}

// Run simulates tasks (in any order; Synthetic.Tasks and FromAlibaba give
// them sorted by arrival, and then they are not copied) on the pool.
func Run(tasks []Task, cfg Config) (Result, error) {
	if cfg.Nodes < 1 || !(cfg.NodeMem > 0) || cfg.ReleaseDelay < 0 || cfg.Step < 0 {
		return Result{}, fmt.Errorf("packsim: want at least one node, a positive node memory, and no negative delay or step")
	}
	if _, err := ParsePolicy(string(cfg.Policy)); err != nil {
		return Result{}, err
	}
	if !slices.IsSortedFunc(tasks, byArrival) {
		tasks = slices.Clone(tasks)
		slices.SortStableFunc(tasks, byArrival)
	}
	s := newSim(cfg)
	if len(tasks) == 0 {
		return s.res, nil
	}
	start := tasks[0].Arrival
	nextSample, now := start, start
	every := max(1, len(tasks)/200)
	for next := 0; next < len(tasks) || s.ev.Len() > 0; {
		ta, te := math.Inf(1), math.Inf(1)
		if next < len(tasks) {
			ta = tasks[next].Arrival
		}
		if s.ev.Len() > 0 {
			te = s.ev.Peek().t
		}
		if cfg.Step > 0 && nextSample < min(ta, te) {
			s.sample(nextSample, start)
			nextSample += cfg.Step
			continue
		}
		if te <= ta {
			e := s.ev.Pop()
			now = e.t
			if e.release {
				s.release(e)
				continue
			}
			s.end(e)
		} else {
			t := tasks[next]
			next++
			now = t.Arrival
			if !(t.Mem <= cfg.NodeMem) || t.Duration < 0 {
				s.res.TooBig++
			} else {
				s.queue = append(s.queue, t)
			}
			if cfg.Progress != nil && next%every == 0 {
				cfg.Progress(float64(next) / float64(len(tasks)))
			}
		}
		s.place(now)
	}
	if cfg.Step > 0 && nextSample <= now {
		s.sample(nextSample, start)
	}
	s.finish(now - start)
	return s.res, nil
}

// place starts queued tasks, first come first served, while the head fits.
func (s *sim) place(now float64) {
	for len(s.queue) > 0 {
		t := s.queue[0]
		i := s.choose(t.Mem)
		if i < 0 {
			return
		}
		s.queue = s.queue[1:]
		n := &s.nodes[i]
		if !n.inUse {
			n.inUse, n.inUseSince = true, now
			s.inUse++
			s.res.PeakNodes = max(s.res.PeakNodes, s.inUse)
		}
		if !n.touched {
			n.touched = true
			s.res.NodesTouched++
		}
		n.used += t.Mem
		n.tasks++
		s.running++
		s.res.Tasks++
		s.waits = append(s.waits, now-t.Arrival)
		s.memHours += t.Mem * t.Duration / 3600
		s.ev.Push(event{t: now + t.Duration, node: i, mem: t.Mem})
	}
}

func (s *sim) fits(i int, mem float64) bool { return s.nodes[i].used+mem <= s.cfg.NodeMem*(1+1e-12) }

// choose returns the node a task of mem MB goes to, or -1.
func (s *sim) choose(mem float64) int {
	if s.cfg.Policy == Packed {
		for i, n := range s.nodes {
			s.view[i] = packing.Node{ID: n.id, Used: n.used, Capacity: s.cfg.NodeMem}
		}
		// Order's first node that fits, in one pass (packing.Config.First)
		if i, on := s.cfg.Packing.First(s.view, func(i int) bool { return s.fits(i, mem) }); on {
			return i
		}
	}
	// the power of two choices: two feasible nodes at random (a reservoir of two)
	a, b, k := -1, -1, 0
	for i := range s.nodes {
		if !s.fits(i, mem) {
			continue
		}
		k++
		switch {
		case k == 1:
			a = i
		case k == 2:
			b = i
		case s.rng.IntN(k) < 2:
			if s.rng.IntN(2) == 0 {
				a = i
			} else {
				b = i
			}
		}
	}
	if b < 0 {
		return a
	}
	if s.rng.IntN(2) == 0 { // which of the two Nomad's shuffle put first: it wins ties
		a, b = b, a
	}
	ua, ub := s.nodes[a].used, s.nodes[b].used
	if s.cfg.Policy == BinPack && ub > ua || s.cfg.Policy != BinPack && ub < ua {
		return b
	}
	return a
}
