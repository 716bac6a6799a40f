// Package survival estimates, from a primary tenant's utilisation history,
// how likely a harvested task of a given length is to run to its end
// without being evicted on one of the tenant's servers. It goes beyond the
// paper (history-based-harvesting.txt), which uses the history only to pick
// classes: the same history tells an operator what a class is worth for a
// task of each length.
//
// The estimate replays the history on one "average" server kept full, as a
// busy cluster keeps it: at every 2-minute slot the driver's room is the
// server's cores less the primary rounded up to whole cores and the
// reserve (Section 5: "round them up to the next integer number of cores");
// when the room shrinks the youngest tasks are killed ("killing enough
// containers from youngest to oldest"), when it grows new tasks start, and
// a task that ends is replaced at once by a new one whose length is drawn
// from a workload's mix. New tasks also leave the driver's admission
// margin free, so the margin shields the tasks from a rise of its size.
// The survival of length L is the share of the tasks of about that length
// that ended rather than being killed. A server that is not full survives
// more: the figure is what a task can count on when harvesting is in
// demand. Pure; no I/O.
package survival

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"time"
)

// Server is the server the history is replayed on.
type Server struct {
	Cores   float64
	Reserve float64 // cores kept free for the primary: tasks are killed when it is short
	// Margin is the admission margin: a task starts only if the reserve and
	// the margin stay free, but none is killed until the reserve itself is
	// short (the driver's guard.Admit and guard.Evictions), so a server
	// holds up to Margin cores of tasks through a rise that would
	// otherwise kill them.
	Margin float64
}

// Series is one tenant's utilisation: percent of a server per slot, oldest
// first (NaN: no sample, taken as the previous one), and its weight in a
// class: how many servers the tenant has, or what it stands for in a
// sample of the class (at least 1 is counted).
type Series struct {
	Percent []float64
	Weight  float64
}

// Point is the survival of one task length.
type Point struct {
	Length      time.Duration `json:"length"`
	Probability Probability   `json:"probability"`
	Tasks       int           `json:"tasks"` // replayed tasks that decided it
}

// Probability is a probability that may be unknown (NaN), which JSON
// carries as null.
type Probability float64

// Known reports whether p is a number.
func (p Probability) Known() bool { return !math.IsNaN(float64(p)) }

// MarshalJSON writes null for an unknown probability.
func (p Probability) MarshalJSON() ([]byte, error) {
	if !p.Known() {
		return []byte("null"), nil
	}
	return json.Marshal(float64(p))
}

// UnmarshalJSON reads null as unknown.
func (p *Probability) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = Probability(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(p))
}

// Curve replays every series at slot spacing slot and returns, for each
// of lengths, the server-weighted share of the replayed tasks of about that
// length (nearest on a log scale) that ended rather than being killed. Each
// new task's length is drawn from mix (seconds; nil: lengths themselves,
// in equal numbers), so the younger tasks that shield an old one from the
// next rise come and go as they would under that workload. The draw is
// seeded: the same input gives the same curve. A length no replayed task
// decided has probability NaN and Tasks 0.
func Curve(series []Series, s Server, slot time.Duration, lengths []time.Duration, mix []float64) []Point {
	return CurveOf(len(series), func(i int, _ []float64) Series { return series[i] }, s, slot, lengths, mix)
}

// CurveOf is Curve over n series that get loads one at a time (into buf
// when it fits), so that they need not all be in memory at once.
func CurveOf(n int, get func(i int, buf []float64) Series, s Server, slot time.Duration, lengths []time.Duration, mix []float64) []Point {
	if len(mix) == 0 {
		for _, l := range lengths {
			mix = append(mix, l.Seconds())
		}
	}
	b := NewBuckets(lengths)
	ended, killed := make([]float64, len(lengths)), make([]float64, len(lengths))
	tasks := make([]int, len(lengths))
	var buf []float64
	for i := 0; i < n; i++ {
		ser := get(i, buf)
		buf = ser.Percent[:0]
		e, x := replay(ser.Percent, s, slot.Seconds(), mix, b, uint64(i))
		w := max(1, ser.Weight)
		for k := range lengths {
			ended[k] += w * float64(e[k])
			killed[k] += w * float64(x[k])
			tasks[k] += e[k] + x[k]
		}
	}
	out := make([]Point, len(lengths))
	for k, l := range lengths {
		out[k] = Point{Length: l, Probability: Probability(math.NaN()), Tasks: tasks[k]}
		if ended[k]+killed[k] > 0 {
			out[k].Probability = Probability(ended[k] / (ended[k] + killed[k]))
		}
	}
	return out
}

// Buckets sort task lengths to the nearest of a grid on a log scale.
type Buckets []float64 // upper bounds, seconds

// NewBuckets makes the buckets of a grid of lengths.
func NewBuckets(lengths []time.Duration) Buckets {
	var b Buckets
	for k := 0; k+1 < len(lengths); k++ { // geometric midpoints
		b = append(b, math.Sqrt(lengths[k].Seconds()*lengths[k+1].Seconds()))
	}
	return append(b, math.Inf(1))
}

// Of is the bucket of a length in seconds.
func (b Buckets) Of(l float64) int {
	k := 0
	for l >= b[k] {
		k++
	}
	return k
}

// Bucket is the index of the length in lengths nearest to l on a log
// scale: how the placer's and the simulator's observations are grouped.
func Bucket(lengths []time.Duration, l time.Duration) int { return NewBuckets(lengths).Of(l.Seconds()) }

type task struct {
	end, length float64 // end = start + length
}

// replay runs one full server over a series and counts, per bucket, the
// tasks that ended and those that were killed. Tasks still running when
// the history ends decide nothing. It keeps the soonest end of the running
// tasks, so a slot in which nothing ends costs no scan (a datacenter's
// refresh replays 10,000 tenants x 21,600 slots).
func replay(percent []float64, s Server, slot float64, mix []float64, b Buckets, seed uint64) (ended, killed []int) {
	ended, killed = make([]int, len(b)), make([]int, len(b))
	if s.Cores <= 0 {
		return ended, killed
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	lengths := make([]float64, len(mix))
	for i, l := range mix {
		lengths[i] = math.Max(1, l)
	}
	draw := func() float64 { return lengths[rng.IntN(len(lengths))] }
	var running []task // oldest first
	soonest := math.Inf(1)
	rescan := func() {
		soonest = math.Inf(1)
		for _, r := range running {
			if r.end < soonest {
				soonest = r.end
			}
		}
	}
	last := 0.0
	for t, u := range percent {
		if u != u { // NaN: no sample, the previous one holds
			u = last
		}
		last = u
		now := float64(t) * slot
		primary := math.Ceil(u/100*s.Cores - 1e-9)
		if primary < 0 {
			primary = 0
		}
		keep := int(max(0, math.Floor(s.Cores-primary-s.Reserve+1e-9)))           // killed beyond this
		admit := int(max(0, math.Floor(s.Cores-primary-s.Reserve-s.Margin+1e-9))) // started up to this
		if len(running) > keep {
			for len(running) > keep { // the youngest go first
				killed[b.Of(running[len(running)-1].length)]++
				running = running[:len(running)-1]
			}
			rescan()
		}
		for len(running) < admit {
			l := draw()
			running = append(running, task{now + l, l})
			soonest = math.Min(soonest, now+l)
		}
		// until the next slot, tasks end and are replaced at once, by
		// younger ones, while admission lets them start
		next := now + slot
		for soonest <= next {
			k := -1
			for i, r := range running {
				if r.end <= next && (k < 0 || r.end < running[k].end) {
					k = i
				}
			}
			end := running[k].end
			ended[b.Of(running[k].length)]++
			running = append(running[:k], running[k+1:]...)
			if len(running) < admit {
				l := draw()
				running = append(running, task{end + l, l})
			}
			rescan()
		}
	}
	return ended, killed
}

// DefaultLengths are the task lengths the placer publishes.
func DefaultLengths() []time.Duration {
	return []time.Duration{2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
		4 * time.Hour, 8 * time.Hour, 24 * time.Hour}
}
