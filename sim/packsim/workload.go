package packsim

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

// Synthetic is a workload with a daily cycle: Poisson arrivals whose rate
// swings by Swing around its mean over 24 h, exponential durations, and a
// memory size drawn from MemMB.
type Synthetic struct {
	Seed        uint64
	Hours       float64   // span of the arrivals
	MeanRunning float64   // tasks running on average (Little's law sets the arrival rate)
	MeanSeconds float64   // mean task duration
	Swing       float64   // 0..1: the rate runs from (1-Swing) to (1+Swing) of its mean
	MemMB       []float64 // each task takes one of these at random
}

// DefaultSynthetic is two days of 10-minute tasks, 200 running on average,
// of 0.5, 1 or 2 GB.
func DefaultSynthetic(seed uint64) Synthetic {
	return Synthetic{Seed: seed, Hours: 48, MeanRunning: 200, MeanSeconds: 600, Swing: 0.8, MemMB: []float64{512, 1024, 2048}}
}

// Tasks draws the workload, sorted by arrival.
func (w Synthetic) Tasks() []Task {
	if w.Hours <= 0 || w.MeanRunning <= 0 || w.MeanSeconds <= 0 || len(w.MemMB) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(w.Seed, 0x5e11))
	swing := math.Min(1, math.Max(0, w.Swing))
	mean := w.MeanRunning / w.MeanSeconds // arrivals per second
	peak := mean * (1 + swing)
	var out []Task
	for t := rng.ExpFloat64() / peak; t < w.Hours*3600; t += rng.ExpFloat64() / peak {
		rate := mean * (1 + swing*math.Sin(2*math.Pi*t/86400))
		if rng.Float64()*peak > rate { // thinning
			continue
		}
		out = append(out, Task{Arrival: t, Duration: rng.ExpFloat64() * w.MeanSeconds, Mem: w.MemMB[rng.IntN(len(w.MemMB))]})
	}
	return out
}

// TraceStats says what FromAlibaba kept.
type TraceStats struct {
	Tasks        int `json:"trace_tasks"`         // rows that ran
	NoMemory     int `json:"tasks_without_mem"`   // rows without a memory request: skipped
	Instances    int `json:"instances"`           // instances of the rows with a request
	KeptInstance int `json:"instances_simulated"` // after sampling
}

// FromAlibaba makes one Task per instance of Alibaba 2017 batch tasks,
// keeping each instance with probability sample (the trace runs about
// 136,000 instances at once on average, far more than a pool worth
// simulating): an instance arrives at its task's create time (shifted so the
// first is at 0), lasts the task's end - create (the trace has no
// per-instance times) and holds mem_req x machineMB (the trace normalises
// memory to a machine's). Tasks without a memory request are skipped.
func FromAlibaba(tasks []schedsim.AlibabaTask, machineMB, sample float64, seed uint64) ([]Task, TraceStats) {
	rng := rand.New(rand.NewPCG(seed, 0xa11b))
	var st TraceStats
	var out []Task
	first := math.Inf(1)
	for _, k := range tasks {
		st.Tasks++
		if k.Mem <= 0 {
			st.NoMemory++
			continue
		}
		st.Instances += k.Instances
		for range k.Instances {
			if sample < 1 && rng.Float64() >= sample {
				continue
			}
			out = append(out, Task{Arrival: k.Create, Duration: k.End - k.Create, Mem: k.Mem * machineMB})
			first = math.Min(first, k.Create)
		}
	}
	for i := range out {
		out[i].Arrival -= first
	}
	slices.SortStableFunc(out, byArrival)
	st.KeptInstance = len(out)
	return out, st
}

func byArrival(a, b Task) int { return cmp.Compare(a.Arrival, b.Arrival) }

// PeakMem is the most memory the tasks hold at once if each runs from its
// arrival (no waiting): the least a pool must offer, before fragmentation.
func PeakMem(tasks []Task) float64 {
	type change struct{ t, mem float64 }
	ch := make([]change, 0, 2*len(tasks))
	for _, k := range tasks {
		ch = append(ch, change{k.Arrival, k.Mem}, change{k.Arrival + k.Duration, -k.Mem})
	}
	slices.SortFunc(ch, func(a, b change) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.mem, b.mem) // ends before starts at the same moment
	})
	held, peak := 0.0, 0.0
	for _, c := range ch {
		held += c.mem
		peak = math.Max(peak, held)
	}
	return peak
}
