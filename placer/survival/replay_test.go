package survival

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveReplay is the replay before it kept the soonest end: every slot
// scans the running tasks for ends. Kept as the reference the faster one
// must match count for count.
func naiveReplay(percent []float64, s Server, slot float64, mix []float64, b Buckets, seed uint64) (ended, killed []int) {
	ended, killed = make([]int, len(b)), make([]int, len(b))
	if s.Cores <= 0 {
		return ended, killed
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	draw := func() float64 { return math.Max(1, mix[rng.IntN(len(mix))]) }
	type tk struct{ start, length float64 }
	var running []tk
	last := 0.0
	for t, u := range percent {
		if math.IsNaN(u) {
			u = last
		}
		last = u
		now := float64(t) * slot
		primary := math.Max(0, math.Ceil(u/100*s.Cores-1e-9))
		keep := int(math.Max(0, math.Floor(s.Cores-primary-s.Reserve+1e-9)))
		admit := int(math.Max(0, math.Floor(s.Cores-primary-s.Reserve-s.Margin+1e-9)))
		for len(running) > keep {
			killed[b.Of(running[len(running)-1].length)]++
			running = running[:len(running)-1]
		}
		for len(running) < admit {
			running = append(running, tk{now, draw()})
		}
		next := now + slot
		for {
			k := -1
			for i, r := range running {
				if r.start+r.length <= next && (k < 0 || r.start+r.length < running[k].start+running[k].length) {
					k = i
				}
			}
			if k < 0 {
				break
			}
			end := running[k].start + running[k].length
			ended[b.Of(running[k].length)]++
			running = append(running[:k], running[k+1:]...)
			if len(running) < admit {
				running = append(running, tk{end, draw()})
			}
		}
	}
	return ended, killed
}

func TestReplayMatchesTheNaiveReplay(t *testing.T) {
	lengths := DefaultLengths()
	b := NewBuckets(lengths)
	var mix []float64
	for _, l := range lengths {
		mix = append(mix, l.Seconds())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 30; trial++ {
		x := make([]float64, 3*720)
		level := rng.Float64() * 100
		for i := range x {
			level = math.Max(0, math.Min(100, level+rng.NormFloat64()*8))
			x[i] = level
			if rng.IntN(50) == 0 {
				x[i] = math.NaN()
			}
		}
		srv := Server{Cores: float64(1 + rng.IntN(32)), Reserve: float64(rng.IntN(3)) * 0.5, Margin: float64(rng.IntN(3))}
		e1, k1 := replay(x, srv, 120, mix, b, uint64(trial))
		e2, k2 := naiveReplay(x, srv, 120, mix, b, uint64(trial))
		if !slices.Equal(e1, e2) || !slices.Equal(k1, k2) {
			t.Fatalf("trial %d on %+v: ended %v killed %v, the naive replay %v %v", trial, srv, e1, k1, e2, k2)
		}
		if trial == 0 && slices.Max(e1) == 0 {
			t.Fatal("nothing ended: the comparison proves nothing")
		}
	}
}
