package hybridsim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/placer/partition"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// fixed is a hybrid rule whose cutoff is 100 s and whose partition is node
// 0 for the first few jobs.
var fixed = partition.Config{Window: 5, Threshold: 0.1, Grow: 2, Shrink: 2, MinPartition: 1, MaxPartition: 1,
	InitialCutoff: 100 * time.Second, InitialSize: 1}

func tasks(n int, d float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// Two nodes; a long job of two 1000 s tasks at 0, a short job of one 50 s
// task at 10. Without a partition the long job takes both nodes and the
// short task waits behind one (done at 1050); with node 0 kept for short
// jobs the long tasks queue on node 1 (done at 2000) and the short one runs
// at once on node 0 (done at 60).
func TestShortJobQueuesBehindALongTaskOnlyWithoutAPartition(t *testing.T) {
	jobs := []Job{{Arrival: 0, Stages: [][]float64{tasks(2, 1000)}}, {Arrival: 10, Stages: [][]float64{{50}}}}
	for _, c := range []struct {
		policy      Policy
		short, long float64
	}{{NoPartition, 1040, 1000}, {Partition, 50, 2000}} {
		r, err := Run(Config{Nodes: 2, Policy: c.policy, Hybrid: fixed}, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if r.Short.Jobs != 1 || r.Long.Jobs != 1 || r.Short.Median != c.short || r.Long.Median != c.long {
			t.Errorf("%s: short %+v long %+v; want the short job in %g s and the long one in %g s", c.policy, r.Short, r.Long, c.short, c.long)
		}
		if r.Makespan != 2000 && c.policy == Partition || r.Makespan != 1050 && c.policy == NoPartition {
			t.Errorf("%s: makespan %g", c.policy, r.Makespan)
		}
	}
}

// A job's second stage is placed when its first has finished.
func TestStagesRunInOrder(t *testing.T) {
	jobs := []Job{{Arrival: 5, Stages: [][]float64{{10, 10}, {}, {5}}}}
	r, err := Run(Config{Nodes: 2, Policy: Partition, Hybrid: fixed}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	// both first-stage tasks at once on the two nodes (5-15), then 15-20
	if r.Short.Jobs != 1 || r.Short.Mean != 15 || r.Makespan != 20 || r.Utilisation != 25.0/40 {
		t.Errorf("%+v: want one short job of 15 s ending at 20 with 25 of 40 node-seconds busy", r)
	}
}

// A node that falls idle takes the first run of short tasks queued behind a
// long one, leaving the long task and anything after it.
func TestStealTakesShortTasksQueuedBehindALongOne(t *testing.T) {
	s := &sim{cfg: Config{Nodes: 2, Policy: NoPartition, StealProbes: 5}, nodes: make([]node, 2), mark: make([]uint32, 2),
		state: partition.New(fixed), rng: rand.New(rand.NewPCG(1, 2)), js: make([]jobState, 4), events: eventq.New(byTimeThenNode)}
	s.enqueue(1, task{job: 0, long: true, dur: 1000})
	for _, tk := range []task{{job: 1, dur: 10}, {job: 1, dur: 20}, {job: 2, long: true, dur: 500}, {job: 3, dur: 30}} {
		s.enqueue(1, tk)
	}
	s.steal(0)
	victim, thief := &s.nodes[1], &s.nodes[0]
	if s.res.Stolen != 2 || !thief.running || thief.cur.dur != 10 || len(thief.waiting()) != 1 || thief.work != 20 {
		t.Fatalf("thief %+v, stolen %d: want the 10 s task running and the 20 s one queued", thief, s.res.Stolen)
	}
	if w := victim.waiting(); len(w) != 2 || w[0].dur != 500 || w[1].dur != 30 || victim.work != 530 || victim.shorts != 1 || victim.longs != 2 {
		t.Errorf("victim %+v: want the long 500 s task and the short 30 s one left", victim)
	}
	s.steal(0) // the 30 s task now waits behind the 500 s one
	if s.res.Stolen != 3 {
		t.Errorf("second steal: %d stolen, want the 30 s task as well", s.res.Stolen)
	}
}

func heavy(t testing.TB) []Job {
	jobs, err := Synthetic{Nodes: 300, Jobs: 3000, Load: 0.9}.Generate(7)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// The source's claim (Sections 4.2, 4.4): at heavy load the partition keeps
// short jobs from queuing behind long ones. It costs the long jobs part of
// the cluster.
func TestPartitionImprovesShortJobsAtHeavyLoad(t *testing.T) {
	jobs := heavy(t)
	var res [2]Result
	for k, p := range []Policy{NoPartition, Partition} {
		r, err := Run(Config{Nodes: 300, Policy: p, StealProbes: 10, Seed: 7}, jobs)
		if err != nil {
			t.Fatal(err)
		}
		res[k] = r
		t.Logf("%-9s short median %.0f p90 %.0f, long mean %.0f, partition %d-%d, cutoff %.0f-%.0f s, stolen %d",
			p, r.Short.Median, r.Short.P90, r.Long.Mean, r.PartitionMin, r.PartitionMax, r.CutoffMin, r.CutoffMax, r.Stolen)
	}
	none, part := res[0], res[1]
	if part.Short.P90 >= none.Short.P90/2 {
		t.Errorf("short p90 %.0f s with the partition, %.0f s without: want under half", part.Short.P90, none.Short.P90)
	}
	if none.Short.Jobs+none.Long.Jobs != 3000 || part.Short.Jobs+part.Long.Jobs != 3000 {
		t.Errorf("not every job finished: %+v %+v", none, part)
	}
	if part.PartitionMin == part.PartitionMax || part.CutoffMin == part.CutoffMax || none.PartitionMax != 0 {
		t.Errorf("the partition (%d-%d) and cutoff (%g-%g) should move with partition.State, and be 0 without one",
			part.PartitionMin, part.PartitionMax, part.CutoffMin, part.CutoffMax)
	}
}

func TestRunIsDeterministic(t *testing.T) {
	jobs, err := Synthetic{Nodes: 60, Jobs: 300, Load: 0.8}.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Nodes: 60, Policy: Partition, StealProbes: 4, Seed: 3}
	a, err1 := Run(cfg, jobs)
	b, err2 := Run(cfg, jobs)
	if err1 != nil || err2 != nil || a.Jobs != 300 {
		t.Fatalf("%v, %v, %d jobs", err1, err2, a.Jobs)
	}
	if a != b {
		t.Errorf("same seed, different results:\n%+v\n%+v", a, b)
	}
}

func TestRunRejectsBadConfigs(t *testing.T) {
	jobs := []Job{{Arrival: 1}, {Arrival: 0}}
	for _, c := range []Config{{Nodes: 1, Policy: Partition}, {Nodes: 4, Policy: "hawk"}, {Nodes: 4, Policy: Partition, StealProbes: -1}} {
		if _, err := Run(c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := Run(Config{Nodes: 4, Policy: Partition}, jobs); err == nil {
		t.Error("jobs out of arrival order accepted")
	}
}

func TestSummarise(t *testing.T) {
	l := summarise([]float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6})
	if l.Jobs != 10 || l.Median != 5 || l.P90 != 9 || l.Mean != 5.5 {
		t.Errorf("%+v", l)
	}
	if !slices.Equal([]float64{rank([]float64{7}, 0.9)}, []float64{7}) || summarise(nil) != (Latency{}) {
		t.Error("one or no value")
	}
}
