package escalsim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Node is a harvested node.
type Node struct {
	Class  int
	FaultP float64 // chance a task attempt fails by the node's fault
	EvictP float64 // chance a task attempt is evicted by the primary tenant
}

// Cluster is the nodes, each with Slots task slots.
type Cluster struct {
	Classes int
	Slots   int
	Nodes   []Node
}

// Job is a job's arrival (seconds), Algorithm 1's ranking of the classes
// for it (its chosen classes first) and its tasks' durations (seconds).
type Job struct {
	Arrival float64
	Ranked  []int
	Tasks   []float64
}

// Workload generates a cluster and its jobs.
type Workload struct {
	Classes, NodesPerClass, Slots int       // 4, 25, 4
	Weights                       []float64 // how often each class ranks first: 0.5, 0.25, 0.15, 0.1
	FlakyShare, FaultP, EvictP    float64   // 0.1 of nodes fail 0.3 of tasks; every node evicts 0.03
	Load                          float64   // offered task-seconds per slot-second of the whole cluster (0.55)
	Hours                         float64   // arrivals for this long (48)
	MaxTasks                      int       // tasks per job, uniform 1..MaxTasks (8)
	TaskSeconds                   float64   // mean task duration, exponential (600)
}

// Default is 4 classes of 25 nodes with 4 slots, skewed toward the first
// classes so that they fill up.
func Default() Workload {
	return Workload{Classes: 4, NodesPerClass: 25, Slots: 4, Weights: []float64{0.5, 0.25, 0.15, 0.1}, FlakyShare: 0.1,
		FaultP: 0.3, EvictP: 0.03, Load: 0.55, Hours: 48, MaxTasks: 8, TaskSeconds: 600}
}

// Generate draws the cluster (flaky nodes anywhere) and the jobs (Poisson
// arrivals; each job's ranking drawn by Weights without replacement).
func (w Workload) Generate(seed uint64) (Cluster, []Job, error) {
	if w.Classes < 1 || w.NodesPerClass < 1 || w.Slots < 1 || len(w.Weights) != w.Classes || !(w.Load > 0) || !(w.Hours > 0) ||
		w.MaxTasks < 1 || !(w.TaskSeconds > 0) || w.FlakyShare < 0 || w.FlakyShare > 1 || w.FaultP < 0 || w.EvictP < 0 || w.FaultP+w.EvictP > 1 {
		return Cluster{}, nil, fmt.Errorf("escalsim: workload %+v: want classes, nodes, slots, tasks of at least 1, one weight per class, "+
			"load, hours and task seconds > 0, shares in 0-1", w)
	}
	for _, x := range w.Weights {
		if !(x > 0) {
			return Cluster{}, nil, fmt.Errorf("escalsim: class weights %v: want all > 0", w.Weights)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0xe5c))
	c := Cluster{Classes: w.Classes, Slots: w.Slots, Nodes: make([]Node, w.Classes*w.NodesPerClass)}
	for i := range c.Nodes {
		c.Nodes[i] = Node{Class: i / w.NodesPerClass, EvictP: w.EvictP}
	}
	flaky := int(math.Round(w.FlakyShare * float64(len(c.Nodes))))
	for _, i := range rng.Perm(len(c.Nodes))[:flaky] {
		c.Nodes[i].FaultP = w.FaultP
	}
	meanTasks := float64(1+w.MaxTasks) / 2
	rate := w.Load * float64(len(c.Nodes)*w.Slots) / (meanTasks * w.TaskSeconds)
	var jobs []Job
	for t := rng.ExpFloat64() / rate; t < w.Hours*3600; t += rng.ExpFloat64() / rate {
		j := Job{Arrival: t, Ranked: rank(w.Weights, rng), Tasks: make([]float64, 1+rng.IntN(w.MaxTasks))}
		for k := range j.Tasks {
			j.Tasks[k] = math.Max(1, w.TaskSeconds*rng.ExpFloat64())
		}
		jobs = append(jobs, j)
	}
	return c, jobs, nil
}

// rank orders the classes by weighted sampling without replacement.
func rank(weights []float64, rng *rand.Rand) []int {
	left := make([]int, len(weights))
	for i := range left {
		left[i] = i
	}
	out := make([]int, 0, len(weights))
	for len(left) > 0 {
		var total float64
		for _, c := range left {
			total += weights[c]
		}
		u, k := rng.Float64()*total, len(left)-1
		for i, c := range left {
			if u < weights[c] {
				k = i
				break
			}
			u -= weights[c]
		}
		out = append(out, left[k])
		left = append(left[:k], left[k+1:]...)
	}
	return out
}
