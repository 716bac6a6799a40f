package hybridsim

import (
	"fmt"
	"math/rand/v2"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

// Job is one job: when it arrives and, per stage, each task's duration in
// seconds. A stage's tasks are placed when the previous stage has finished.
type Job struct {
	Arrival float64
	Stages  [][]float64
}

// MeanTask is the job's mean task duration in seconds: what classifies it
// as short or long (the source's estimated task duration, Section 5.3).
func (j Job) MeanTask() float64 {
	var sum float64
	n := 0
	for _, st := range j.Stages {
		for _, d := range st {
			sum += d
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Work is the job's task-seconds.
func (j Job) Work() float64 { return j.MeanTask() * float64(j.Tasks()) }

// Tasks counts the job's tasks.
func (j Job) Tasks() int {
	n := 0
	for _, st := range j.Stages {
		n += len(st)
	}
	return n
}

// Synthetic is the Sparrow-like mix of the source's Section 3.5 scaled to a
// cluster of Nodes: Sparrow's 5000 nodes ran short jobs of 250 tasks and
// long ones of 1000, so by default short jobs get Nodes/20 tasks and long
// ones Nodes/5.
type Synthetic struct {
	Nodes        int
	Jobs         int
	Load         float64 // offered task-seconds per node-second
	ShortShare   float64 // 0: 0.9
	ShortTasks   int     // 0: Nodes/20
	LongTasks    int     // 0: Nodes/5
	ShortSeconds float64 // 0: 50
	LongSeconds  float64 // 0: 10000
}

func (s Synthetic) withDefaults() Synthetic {
	if s.ShortShare == 0 {
		s.ShortShare = 0.9
	}
	if s.ShortTasks == 0 {
		s.ShortTasks = max(1, s.Nodes/20)
	}
	if s.LongTasks == 0 {
		s.LongTasks = max(1, s.Nodes/5)
	}
	if s.ShortSeconds == 0 {
		s.ShortSeconds = 50
	}
	if s.LongSeconds == 0 {
		s.LongSeconds = 10000
	}
	return s
}

// Generate draws the jobs: short with probability ShortShare, Poisson
// arrivals at the rate that offers Load.
func (s Synthetic) Generate(seed uint64) ([]Job, error) {
	s = s.withDefaults()
	if s.Nodes < 1 || s.Jobs < 1 || !(s.Load > 0) || s.ShortShare < 0 || s.ShortShare > 1 {
		return nil, fmt.Errorf("synthetic: want nodes and jobs of at least 1, load > 0 and a short share in 0-1; have %+v", s)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5b0))
	jobs := make([]Job, s.Jobs)
	for i := range jobs {
		n, d := s.LongTasks, s.LongSeconds
		if rng.Float64() < s.ShortShare {
			n, d = s.ShortTasks, s.ShortSeconds
		}
		st := make([]float64, n)
		for k := range st {
			st[k] = d
		}
		jobs[i].Stages = [][]float64{st}
	}
	meanWork := s.ShortShare*float64(s.ShortTasks)*s.ShortSeconds + (1-s.ShortShare)*float64(s.LongTasks)*s.LongSeconds
	poisson(jobs, s.Load*float64(s.Nodes)/meanWork, rand.New(rand.NewPCG(seed, 0xa77)))
	return jobs, nil
}

// FromTrace turns a trace's job shapes, in order, into jobs with Poisson
// arrivals at the rate that offers load to nodes. A stage wider than width
// tasks is folded into width tasks carrying the same task-seconds: a trace
// from thousands of machines replayed on a few hundred keeps its work, and
// a SWIM trace (whose tasks all take the same time per 64 MiB) gets the
// spread of task durations that tells long jobs from short ones.
func FromTrace(trace []schedsim.TraceJob, nodes, width int, load float64, seed uint64) ([]Job, error) {
	if len(trace) == 0 || nodes < 1 || width < 1 || !(load > 0) {
		return nil, fmt.Errorf("trace: want jobs, nodes and width of at least 1 and load > 0")
	}
	jobs := make([]Job, len(trace))
	var work float64
	for i, t := range trace {
		for _, st := range t.Stages {
			if len(st) == 0 {
				continue
			}
			st = Fold(st, width)
			jobs[i].Stages = append(jobs[i].Stages, st)
		}
		work += jobs[i].Work()
	}
	poisson(jobs, load*float64(nodes)/(work/float64(len(jobs))), rand.New(rand.NewPCG(seed, 0xa77)))
	return jobs, nil
}

// Fold returns stage as at most width tasks with the same task-seconds: a
// wider stage becomes width tasks of its total divided by width.
func Fold(stage []float64, width int) []float64 {
	if len(stage) <= width {
		return stage
	}
	var sum float64
	for _, d := range stage {
		sum += d
	}
	out := make([]float64, width)
	for i := range out {
		out[i] = sum / float64(width)
	}
	return out
}

// poisson sets arrivals with exponential gaps of the given rate (jobs/s),
// the first at time 0.
func poisson(jobs []Job, rate float64, rng *rand.Rand) {
	t := 0.0
	for i := range jobs {
		jobs[i].Arrival = t
		t += rng.ExpFloat64() / rate
	}
}
