// Package storagesim owns the storage half of the datacenter simulator
// (history-based-harvesting.txt, Section 6, "Simulator" and "Data placement
// and access comparisons"): a year of a harvested file system whose disks
// the primary tenants reimage (the synthetic generator's model, correlated
// mass reimages included, or reimages read from a CSV file), with blocks
// written over the year and lost replicas re-created at a per-server rate,
// placed by stock HDFS or by Algorithm 2 (the storage/grid code the blob
// tier runs); and reads against busy servers as utilisation rises. A block
// is lost when its last replica is reimaged before a repair re-creates
// another; a read fails when every replica sits on a busy server.
package storagesim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// Year is the span the paper simulates for durability.
const Year = 365 * 24 * time.Hour

// Config says what to simulate.
type Config struct {
	Seed     uint64
	Policy   Policy
	Replicas int
	Blocks   int           // written at a steady rate over the span
	Span     time.Duration // default Year
	// RepairPerHour is how many of a reimaged server's lost replicas are
	// re-created per hour (the paper's HDFS setting and the blob
	// repairer's default: 30), fewest-surviving-replicas first.
	RepairPerHour float64
	RackSize      int // servers per rack (default 20)
	// RepairOrder orders a reimaged server's lost replicas: RepairBySurvivors
	// (default: fewest survivors first, as HDFS's under-replication queues)
	// or RepairByRisk (then, among equals, the highest grid.RepairRisk of
	// the survivors' tenants first, as the blob repairer does).
	RepairOrder string
	// Capacity is how many replicas a server's harvestable space holds
	// (0: unlimited). Full servers take no replica; the grid is re-clustered
	// by free space once a simulated day, as the blob front re-clusters
	// after its catalogue scans.
	Capacity int
	// Writers says who writes blocks (default NodeWriters, the paper's).
	Writers Writers
	// RepairLimit says what RepairPerHour limits: RepairLimitReimaged
	// (default) or RepairLimitReceiver (the blob repairer's).
	RepairLimit string
	// Steering is the blob front's placement beyond Algorithm 2, for the
	// grid's writes and repairs; the tenants' BusyHours steer it.
	Steering
}

// Result is what one run measured.
type Result struct {
	Datacenter string  `json:"datacenter"`
	Policy     Policy  `json:"policy"`
	Replicas   int     `json:"replicas"`
	Seed       uint64  `json:"seed"`
	Blocks     int     `json:"blocks"`
	Lost       int     `json:"lost_blocks"`
	LostPct    float64 `json:"lost_percent"`
	Reimages   int     `json:"reimages"`
	Repairs    int     `json:"repairs"`
	// DownToOne counts the times a block was left with a single replica.
	DownToOne int `json:"down_to_one_replica"`
	// LongestRepairHours is the longest a reimaged server's lost replicas
	// took to re-create (with RepairLimitReceiver, the longest a block
	// waited in the queue).
	LongestRepairHours float64 `json:"longest_repair_hours"`
	Degraded           int     `json:"degraded_placements"`
	// Unwritten counts blocks that found fewer than R servers with room.
	Unwritten int `json:"unwritten_blocks"`
	// Retirements counts servers taken out of service (Datacenter.Presence),
	// Drained the replicas moved off them first.
	Retirements int `json:"retirements,omitempty"`
	Drained     int `json:"drained_replicas,omitempty"`
	Servers     int `json:"servers"`
	Tenants     int `json:"tenants"`
}

// Repair orders.
const (
	RepairBySurvivors = "survivors"
	RepairByRisk      = "risk"
)

// serverEvent is one replayed event: when (from the span's start), which
// server, and what happens to it.
type serverEvent struct {
	at     time.Duration
	server int32
	kind   eventKind
}

// eventKind orders events at the same instant: a wipe, then a retirement,
// then a server joining.
type eventKind uint8

const (
	wipeEvent eventKind = iota
	retireEvent
	joinEvent
)

// Run simulates dc under cfg; progress (may be nil) hears how many of the
// writes and reimages are done. The same seed gives the same result.
func Run(dc Datacenter, cfg Config, progress func(done, total int)) (Result, error) {
	if cfg.Span == 0 {
		cfg.Span = Year
	}
	if cfg.RackSize == 0 {
		cfg.RackSize = 20
	}
	if cfg.Replicas < 1 || cfg.Replicas > 255 || cfg.RepairPerHour <= 0 || cfg.Blocks < 0 || cfg.Capacity < 0 {
		return Result{}, fmt.Errorf("want 1-255 replicas, a positive repair rate, and no negative blocks or capacity")
	}
	switch cfg.RepairOrder {
	case "":
		cfg.RepairOrder = RepairBySurvivors
	case RepairBySurvivors, RepairByRisk:
	default:
		return Result{}, fmt.Errorf("repair order %q: want %s or %s", cfg.RepairOrder, RepairBySurvivors, RepairByRisk)
	}
	var err error
	if cfg.Writers, err = ParseWriters(string(cfg.Writers)); err != nil {
		return Result{}, err
	}
	if cfg.RepairLimit, err = ParseRepairLimit(cfg.RepairLimit); err != nil {
		return Result{}, err
	}
	if cfg.Policy != Stock && cfg.Policy != Grid {
		return Result{}, fmt.Errorf("policy %q: want stock or grid", cfg.Policy)
	}
	w, err := buildWorld(dc.Tenants, cfg.RackSize)
	if err != nil {
		return Result{}, err
	}
	if cfg.Replicas > len(w.id) {
		return Result{}, fmt.Errorf("%d replicas but only %d servers", cfg.Replicas, len(w.id))
	}
	var events []serverEvent
	for _, r := range dc.Reimages {
		at := r.Time.Sub(dc.Start)
		if at < 0 || at >= cfg.Span {
			continue
		}
		s, ok := w.index[r.Node]
		if !ok {
			return Result{}, fmt.Errorf("reimage of %s, which is no tenant's server", r.Node)
		}
		events = append(events, serverEvent{at, s, wipeEvent})
	}
	wipes := len(events)
	presence, err := w.presenceEvents(dc, cfg.Span)
	if err != nil {
		return Result{}, err
	}
	events = append(events, presence...)
	sort.Slice(events, func(i, j int) bool {
		a, b := events[i], events[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.server < b.server
	})
	s := newState(w, cfg)
	res := Result{Datacenter: dc.Name, Policy: cfg.Policy, Replicas: cfg.Replicas, Seed: cfg.Seed, Blocks: cfg.Blocks,
		Reimages: wipes, Servers: len(w.id), Tenants: len(dc.Tenants)}
	total := cfg.Blocks + len(events)
	writeAt := func(b int) time.Duration { // a steady rate: block b in the middle of the b-th slice of the span
		return time.Duration((float64(b) + 0.5) / float64(cfg.Blocks) * float64(cfg.Span))
	}
	nextWrite, nextEvent := 0, 0
	nextRegrid := 24 * time.Hour
	for done := 0; ; done++ {
		if progress != nil && done%(1<<14) == 0 {
			progress(nextWrite+nextEvent, total)
		}
		// the earliest event; on a tie a server's event comes first, then a repair, then a write
		tEvent, tRepair, tWrite := never, never, never
		if nextEvent < len(events) {
			tEvent = events[nextEvent].at
		}
		if t := s.repair.due(); t < cfg.Span { // the year's end leaves the rest undone
			tRepair = t
		}
		if nextWrite < cfg.Blocks {
			tWrite = writeAt(nextWrite)
		}
		if now := min(tEvent, tRepair, tWrite); cfg.Capacity > 0 && now != never && now >= nextRegrid {
			w.regrid(int32(cfg.Capacity), s.used)
			nextRegrid = (now/(24*time.Hour) + 1) * 24 * time.Hour
		}
		switch {
		case tEvent == never && tRepair == never && tWrite == never:
			if progress != nil {
				progress(total, total)
			}
			res.Lost, res.Repairs, res.DownToOne, res.Degraded, res.Unwritten = s.lost, s.repairs, s.downToOne, s.degraded, s.unwritten
			res.Drained = s.drained
			res.LostPct = 100 * float64(s.lost) / float64(max(1, cfg.Blocks))
			res.LongestRepairHours = s.repair.longestHours()
			return res, nil
		case tEvent <= tRepair && tEvent <= tWrite:
			var pending []int32
			switch ev := events[nextEvent]; ev.kind {
			case wipeEvent:
				pending = s.wipe(ev.server)
			case retireEvent:
				w.setAbsent(ev.server, true)
				pending = s.drain(ev.server)
				res.Retirements++
			case joinEvent:
				w.setAbsent(ev.server, false)
			}
			if len(pending) > 0 {
				s.repair.take(s, pending, tEvent)
			}
			nextEvent++
		case tRepair <= tWrite:
			s.repair.run(s, tRepair)
		default:
			s.write(int32(nextWrite))
			nextWrite++
		}
	}
}

// state is the file system during a run: where each block's live replicas
// are and what each server holds.
type state struct {
	cfg      Config
	w        *world
	place    placer
	rng      *rand.Rand
	replicas []int32   // block b's live replicas are replicas[b*R : b*R+live[b]]
	live     []uint8   // live replicas of each block (0: not written yet, or lost)
	onServer [][]int32 // blocks with a replica on each server, in arrival order
	used     []int32   // replicas on each server
	repair   repairer  // what Config.RepairLimit says the repair rate limits

	lost, repairs, downToOne, degraded, unwritten, drained int
}

// runRNG is the random source of one policy and replication: runs of other
// policies or replications with the same seed draw their own streams.
func runRNG(seed uint64, pol Policy, replicas int) *rand.Rand {
	stream := uint64(replicas) << 8
	if pol == Grid {
		stream |= 1
	}
	return rand.New(rand.NewPCG(seed, stream))
}

func newState(w *world, cfg Config) *state {
	w.steer(cfg.Steering)
	rng := runRNG(cfg.Seed, cfg.Policy, cfg.Replicas)
	s := &state{cfg: cfg, w: w, rng: rng, replicas: make([]int32, cfg.Blocks*cfg.Replicas), live: make([]uint8, cfg.Blocks),
		onServer: make([][]int32, len(w.id)), used: make([]int32, len(w.id))}
	s.repair = newReimagedRepairs(cfg)
	if cfg.RepairLimit == RepairLimitReceiver {
		s.repair = newReceiverQueue(cfg, len(w.id))
	}
	s.place = placer{policy: cfg.Policy, writers: cfg.Writers, replicas: cfg.Replicas, rng: rng, w: w, capacity: int32(cfg.Capacity), used: s.used}
	if cfg.Capacity > 0 {
		w.regrid(int32(cfg.Capacity), s.used)
	}
	return s
}

// blockReplicas is the live replicas of block b.
func (s *state) blockReplicas(b int32) []int32 {
	r := s.cfg.Replicas
	return s.replicas[int(b)*r : int(b)*r+int(s.live[b])]
}

// write places a new block, written by a random server (one out of
// service writes nothing of its own: its block starts elsewhere, as a full
// writer's does).
func (s *state) write(b int32) {
	servers, degraded := s.place.initial(int32(s.rng.IntN(len(s.w.id))))
	if degraded {
		s.degraded++
	}
	if servers == nil {
		s.unwritten++
		return
	}
	for _, n := range servers {
		s.add(b, n)
	}
}

func (s *state) add(b, server int32) {
	s.replicas[int(b)*s.cfg.Replicas+int(s.live[b])] = server
	s.live[b]++
	s.hold(b, server)
}

// hold notes that server now holds a replica of b.
func (s *state) hold(b, server int32) {
	s.onServer[server] = append(s.onServer[server], b)
	s.used[server]++
	if s.cfg.Capacity > 0 {
		s.w.gridNode[server].Free-- // grid.Commit's bookkeeping
	}
}

// drain moves every replica off a server leaving service (HDFS's
// decommission copies a node's blocks before it goes): each goes where a
// repair around the block's replicas would put it. A replica that finds no
// room is dropped as a wipe drops it (lost if it was the last, else queued
// for repair).
func (s *state) drain(server int32) []int32 {
	held := s.onServer[server]
	var stuck []int32
	for _, b := range held {
		reps := s.blockReplicas(b)
		i := slices.Index(reps, server)
		if i < 0 {
			continue
		}
		if n, ok := s.place.repair(reps); ok {
			reps[i] = n
			s.hold(b, n)
			s.drained++
			continue
		}
		stuck = append(stuck, b)
	}
	s.onServer[server] = stuck
	return s.wipe(server)
}

// wipe reimages a server: every replica on it is gone; a block left with
// none is lost, the others are returned to wait for repair.
func (s *state) wipe(server int32) []int32 {
	held := s.onServer[server]
	s.onServer[server] = nil
	s.used[server] = 0
	if s.cfg.Capacity > 0 {
		s.w.gridNode[server].Free = int64(s.cfg.Capacity)
	}
	pending := held[:0]
	for _, b := range held {
		reps := s.blockReplicas(b)
		for i, n := range reps {
			if n == server {
				reps[i] = reps[len(reps)-1]
				s.live[b]--
				break
			}
		}
		switch s.live[b] {
		case 0:
			s.lost++
			continue
		case 1:
			s.downToOne++
		}
		pending = append(pending, b)
	}
	return pending
}
