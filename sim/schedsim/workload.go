package schedsim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/harvest-platform/harvest/placer/jobtype"
)

// JobClass is one kind of DAG job in a mix: a chain of stages, each a set
// of parallel one-core tasks.
type JobClass struct {
	Name        string
	Weight      float64 // share of arrivals
	Stages      [2]int  // min, max stages
	Tasks       [2]int  // min, max tasks per stage
	TaskSeconds float64 // median task duration
	Sigma       float64 // of the duration's logarithm (0: every task takes TaskSeconds)
}

// Mix is a workload: job classes drawn by weight, or, when Trace is set,
// jobs drawn uniformly from a real trace's shapes (their class is then
// their type by the paper's thresholds, for the breakdown).
type Mix struct {
	Classes []JobClass
	Trace   []TraceJob
}

// TPCDSMix is a TPC-DS-like mix in the spirit of the paper's: many short
// queries, fewer medium ones, a few long ones with wide stages, the widest
// as wide as TPC-DS query 19 (469 concurrent containers, Figure 7). The
// rest of its shape is ours: the paper does not list its 52 queries.
func TPCDSMix() Mix {
	return Mix{Classes: []JobClass{
		{Name: "short", Weight: 0.55, Stages: [2]int{2, 3}, Tasks: [2]int{2, 16}, TaskSeconds: 40, Sigma: 0.5},
		{Name: "medium", Weight: 0.30, Stages: [2]int{3, 5}, Tasks: [2]int{8, 48}, TaskSeconds: 90, Sigma: 0.5},
		{Name: "long", Weight: 0.15, Stages: [2]int{4, 7}, Tasks: [2]int{16, 469}, TaskSeconds: 240, Sigma: 0.5},
	}}
}

// jobSpec is one drawn job: task durations per stage.
type jobSpec struct {
	class  string
	stages [][]float64
}

func (j jobSpec) length() float64 { // critical path: stages in turn, tasks in parallel
	var s float64
	for _, st := range j.stages {
		s += maxOf(st)
	}
	return s
}

func (j jobSpec) peak() int {
	p := 0
	for _, st := range j.stages {
		p = max(p, len(st))
	}
	return p
}

// coreSeconds is the job's work: every task a one-core container.
func (j jobSpec) coreSeconds() float64 {
	var s float64
	for _, st := range j.stages {
		for _, d := range st {
			s += d
		}
	}
	return s
}

// scaled multiplies every task's length and every stage's width by k (the
// paper's simulator "multiply their lengths and container usage by a
// scaling factor", L275): a stage of n tasks becomes round(n x k), each
// drawn from the stage's own durations.
func (j jobSpec) scaled(k float64, rng *rand.Rand) jobSpec {
	if k == 1 {
		return j
	}
	out := jobSpec{class: j.class, stages: make([][]float64, len(j.stages))}
	for s, st := range j.stages {
		n := max(1, int(math.Round(float64(len(st))*k)))
		ns := make([]float64, n)
		for i := range ns {
			src := st[i%len(st)]
			if i >= len(st) {
				src = st[rng.IntN(len(st))]
			}
			ns[i] = src * k
		}
		out.stages[s] = ns
	}
	return out
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func (m Mix) draw(rng *rand.Rand) jobSpec {
	if len(m.Trace) > 0 {
		t := m.Trace[rng.IntN(len(m.Trace))]
		j := jobSpec{stages: t.Stages}
		j.class = jobtype.Default().Of(time.Duration(j.length()*float64(time.Second)), true)
		return j
	}
	var total float64
	for _, c := range m.Classes {
		total += c.Weight
	}
	u, c := rng.Float64()*total, m.Classes[len(m.Classes)-1]
	for _, k := range m.Classes {
		if u < k.Weight {
			c = k
			break
		}
		u -= k.Weight
	}
	j := jobSpec{class: c.Name}
	for s := c.Stages[0] + rng.IntN(c.Stages[1]-c.Stages[0]+1); s > 0; s-- {
		n := c.Tasks[0] + rng.IntN(c.Tasks[1]-c.Tasks[0]+1)
		st := make([]float64, n)
		for i := range st {
			st[i] = math.Max(1, c.TaskSeconds*math.Exp(c.Sigma*rng.NormFloat64()))
		}
		j.stages = append(j.stages, st)
	}
	return j
}

// meanCoreSeconds estimates a mix's core-seconds per job, unscaled.
func (m Mix) meanCoreSeconds(seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	var s float64
	const n = 4000
	for i := 0; i < n; i++ {
		s += m.draw(rng).coreSeconds()
	}
	return s / n
}
