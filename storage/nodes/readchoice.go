package nodes

// Which replica a read starts from. Each node's reads are scored as
// Finagle's "peak EWMA" load balancer scores a backend: the recent time to
// first byte, a moving average that jumps at once to a slower sample and
// otherwise decays over readDecay (towards 0 while the node serves no read,
// so a node that was slow is tried again in time), times the node's reads
// in flight from this front plus one. A read starts on the replica of
// least cost among those up and not busy, and moves to the next on
// failure; a redirect points at the first. A node with no sample yet costs
// least, so it gets one.

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harvest-platform/harvest/storage/catalog"
)

const (
	readDecay = 10 * time.Second // Finagle's default decay time
	costFloor = 1e-3             // seconds: with no sample, reads in flight still order nodes
)

// readStats are one node's reads as this front sees them.
type readStats struct {
	inflight atomic.Int64
	mu       sync.Mutex
	ewma     float64   // seconds to first byte
	at       time.Time // of the last sample (zero: none)
}

// decayed is the average at now; s.mu held.
func (s *readStats) decayed(now time.Time) float64 {
	if s.at.IsZero() {
		return 0
	}
	return s.ewma * math.Exp(-now.Sub(s.at).Seconds()/readDecay.Seconds())
}

// observe adds one read's time to first byte.
func (s *readStats) observe(d time.Duration, now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, cur := d.Seconds(), s.decayed(now)
	if x > cur { // the peak: a slower sample counts at once
		s.ewma = x
	} else {
		w := math.Exp(-now.Sub(s.at).Seconds() / readDecay.Seconds())
		s.ewma = s.ewma*w + x*(1-w)
	}
	s.at = now
	return s.ewma
}

// cost is what starting one more read there costs, at now.
func (s *readStats) cost(now time.Time) float64 {
	s.mu.Lock()
	e := s.decayed(now)
	s.mu.Unlock()
	return (e + costFloor) * float64(s.inflight.Load()+1)
}

func (p *Pool) readStats(id string) *readStats {
	s, _ := p.reads.LoadOrStore(id, new(readStats))
	return s.(*readStats)
}

// InFlight is the reads in flight on a node (StartRead).
func (p *Pool) InFlight(id string) int64 { return p.readStats(id).inflight.Load() }

// StartRead counts a read in flight on a node until the returned func runs.
func (p *Pool) StartRead(id string) func() {
	s := p.readStats(id)
	s.inflight.Add(1)
	return func() { s.inflight.Add(-1) }
}

// ObserveRead records a read's time to first byte from a node.
func (p *Pool) ObserveRead(id string, d time.Duration) {
	e := p.readStats(id).observe(d, time.Now())
	if f := p.firstByte.Load(); f != nil {
		(*f)(id, e)
	}
}

// OnFirstByte has fn told each node's time to first byte (seconds, the
// moving average) after every read ObserveRead records: the front's metric.
func (p *Pool) OnFirstByte(fn func(node string, secs float64)) { p.firstByte.Store(&fn) }

// ByReadCost orders replicas by their nodes' read cost, least first (ties
// keep their order).
func (p *Pool) ByReadCost(rs []catalog.Replica) {
	now := time.Now()
	cost := make(map[string]float64, len(rs))
	for _, r := range rs {
		cost[r.Node] = p.readStats(r.Node).cost(now)
	}
	sort.SliceStable(rs, func(i, j int) bool { return cost[rs[i].Node] < cost[rs[j].Node] })
}
