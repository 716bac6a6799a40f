package nodes

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/storage/catalog"
)

func TestReadsStartOnTheReplicaOfLeastPeakEWMACost(t *testing.T) {
	n := &Pool{}
	n.ObserveRead("slow", 200*time.Millisecond)
	n.ObserveRead("fast", 10*time.Millisecond)
	order := func() []string {
		rs := []catalog.Replica{{Node: "slow"}, {Node: "fast"}, {Node: "new"}}
		n.ByReadCost(rs)
		var out []string
		for _, r := range rs {
			out = append(out, r.Node)
		}
		return out
	}
	if got := order(); !slices.Equal(got, []string{"new", "fast", "slow"}) {
		t.Fatalf("order %v: want a node with no sample first (it gets one), then by time to first byte", got)
	}
	var done []func()
	for range 30 { // (10 ms + 1 ms) x 31 reads in flight costs more than 201 ms x 1
		done = append(done, n.StartRead("fast"))
	}
	if got := order(); !slices.Equal(got, []string{"new", "slow", "fast"}) {
		t.Fatalf("order with 30 reads in flight on fast: %v", got)
	}
	for _, d := range done {
		d()
	}
	if n.InFlight("fast") != 0 {
		t.Fatalf("reads in flight after they ended: %d", n.InFlight("fast"))
	}
}

func TestPeakEWMAJumpsUpAndDecays(t *testing.T) {
	var s readStats
	t0 := time.Now()
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if e := s.observe(200*time.Millisecond, t0); !near(e, 0.2) {
		t.Fatalf("first sample: %v", e)
	}
	w := math.Exp(-1.0 / readDecay.Seconds())
	if e := s.observe(10*time.Millisecond, t0.Add(time.Second)); !near(e, 0.2*w+0.01*(1-w)) {
		t.Fatalf("a faster sample a second later: %v, want the moving average %v", e, 0.2*w+0.01*(1-w))
	}
	if e := s.observe(500*time.Millisecond, t0.Add(2*time.Second)); !near(e, 0.5) {
		t.Fatalf("a slower sample: %v, want it at once (the peak)", e)
	}
	if c := s.cost(t0.Add(62 * time.Second)); c > 0.5*math.Exp(-6)+costFloor+1e-9 {
		t.Fatalf("a minute without reads: cost %v, want the average decayed towards 0", c)
	}
}
