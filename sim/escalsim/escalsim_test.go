package escalsim

import (
	"math"
	"testing"
	"time"
)

func oneTask(at float64, ranked []int, d float64) Job {
	return Job{Arrival: at, Ranked: ranked, Tasks: []float64{d}}
}

// Three classes of one one-slot node. Jobs 0 and 1 fill classes 0 and 1
// for 10000 s; job 2 chose class 0, then ranks 1, then 2. Escalating every
// 600 s, it may use classes 0 and 1 at 600 (both full) and any node at
// 1200, where class 2 takes it: waits 1200 s, done at 1300. Strict, it
// waits for class 0 until 10000 and is done at 10100.
func TestBlockedJobRunsOnAnyNodeAfterTwoDelays(t *testing.T) {
	cl := Cluster{Classes: 3, Slots: 1, Nodes: []Node{{Class: 0}, {Class: 1}, {Class: 2}}}
	jobs := []Job{oneTask(0, []int{0, 1, 2}, 10000), oneTask(0, []int{1, 0, 2}, 10000), oneTask(0, []int{0, 1, 2}, 100)}
	for _, c := range []struct {
		cfg                Config
		wait, done         float64
		outOfClass, jobsOC int
	}{
		{Config{Escalate: true, Delay: 10 * time.Minute}, 1200, 1300, 1, 1},
		{Config{}, 10000, 10100, 0, 0},
	} {
		r, err := Run(cl, jobs, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		// nearest-rank p90 of three jobs is the slowest
		if r.Finished != 3 || r.P90Wait != c.wait || r.MeanWait != c.wait/3 || r.OutOfClass != c.outOfClass || r.EscalatedJobs != c.jobsOC {
			t.Errorf("escalate=%v: %+v; want job 2 to wait %g s", c.cfg.Escalate, r, c.wait)
		}
		if got := r.MeanCompletion*3 - 20000; math.Abs(got-c.done) > 1e-6 {
			t.Errorf("job 2 done after %g s, want %g", got, c.done)
		}
	}
	// Without job 1, class 1 has room: one delay is enough.
	r, _ := Run(cl, []Job{jobs[0], jobs[2]}, Config{Escalate: true, Delay: 10 * time.Minute})
	if r.P90Wait != 600 {
		t.Errorf("wait %g s with the next class free, want 600", r.P90Wait)
	}
}

// Two one-slot nodes of one class; node 0 fails every task. A job of ten
// 100 s tasks runs them all on node 1 (done at 1000). With greylisting node
// 0 gets exactly 3 tasks, all lost; without, it keeps getting them (and
// may take the last task when both nodes are free, finishing the job later);
// with counters reset every 300 s it gets more again.
func TestNodeWithThreeFaultsStopsReceivingTasks(t *testing.T) {
	cl := Cluster{Classes: 1, Slots: 1, Nodes: []Node{{Class: 0, FaultP: 1}, {Class: 0}}}
	jobs := []Job{{Arrival: 0, Ranked: []int{0}, Tasks: []float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}}}
	grey, err := Run(cl, jobs, Config{Greylist: true, Reset: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if grey.FlakyPlacements != 3 || grey.LostToFaults != 3 || grey.GreylistedMax != 1 || grey.MeanCompletion != 1000 || grey.Placements != 13 {
		t.Errorf("greylisting: %+v; want 3 placements on node 0, all lost, and the job done at 1000 s", grey)
	}
	plain, _ := Run(cl, jobs, Config{})
	if plain.FlakyPlacements <= 3 || plain.LostToFaults != plain.FlakyPlacements || plain.GreylistedMax != 0 || plain.MeanCompletion < 1000 {
		t.Errorf("no greylisting: %+v; want node 0 to keep failing tasks", plain)
	}
	reset, _ := Run(cl, jobs, Config{Greylist: true, Reset: 300 * time.Second})
	if reset.FlakyPlacements <= 3 || reset.FlakyPlacements >= plain.FlakyPlacements {
		t.Errorf("reset every 300 s: %d placements on node 0, want more than 3 and fewer than without greylisting (%d)",
			reset.FlakyPlacements, plain.FlakyPlacements)
	}
}

// Evictions are the primary tenant's doing: a node that evicts every task
// keeps receiving tasks under greylisting.
func TestEvictionsDoNotGreylist(t *testing.T) {
	cl := Cluster{Classes: 1, Slots: 1, Nodes: []Node{{Class: 0, EvictP: 1}, {Class: 0}}}
	jobs := []Job{{Arrival: 0, Ranked: []int{0}, Tasks: []float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}}}
	r, err := Run(cl, jobs, Config{Greylist: true, Reset: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if r.Evictions <= 3 || r.LostToFaults != 0 || r.GreylistedMax != 0 || r.Placements != 10+r.Evictions {
		t.Errorf("%+v: want node 0 evicting more than 3 tasks and never greylisted", r)
	}
}

func shortDefault(t testing.TB, hours float64) (Cluster, []Job) {
	w := Default()
	w.Hours = hours
	cl, jobs, err := w.Generate(5)
	if err != nil {
		t.Fatal(err)
	}
	return cl, jobs
}

// On the default skewed cluster, escalation cuts the wait that strict
// classes impose on the full classes, and greylisting cuts the tasks lost
// to the flaky nodes.
func TestPoliciesBeatTheirBaselines(t *testing.T) {
	cl, jobs := shortDefault(t, 24)
	run := func(c Config) Result {
		r, err := Run(cl, jobs, c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished != r.Jobs {
			t.Fatalf("%+v: not every job finished", r)
		}
		return r
	}
	strict, esc := run(Config{Seed: 5}), run(Config{Escalate: true, Delay: 10 * time.Minute, Seed: 5})
	if esc.P90Wait >= strict.P90Wait/2 || esc.MeanCompletion >= strict.MeanCompletion || esc.EscalatedJobs == 0 {
		t.Errorf("escalation %+v\nstrict %+v\nwant under half the p90 wait", esc, strict)
	}
	grey := run(Config{Greylist: true, Seed: 5})
	if grey.LostToFaults >= strict.LostToFaults/3 || grey.FlakyPlacements >= strict.FlakyPlacements/3 || grey.GreylistedMax == 0 {
		t.Errorf("greylisting %+v\nnone %+v\nwant under a third of the lost tasks and flaky placements", grey, strict)
	}
	if again := run(Config{Escalate: true, Delay: 10 * time.Minute, Seed: 5}); again != esc {
		t.Errorf("same seed, different results")
	}
}

func TestGenerate(t *testing.T) {
	cl, jobs := shortDefault(t, 48)
	flaky, first0 := 0, 0
	for _, n := range cl.Nodes {
		if n.FaultP > 0 {
			flaky++
		}
	}
	var work float64
	for _, j := range jobs {
		if j.Ranked[0] == 0 {
			first0++
		}
		if len(j.Ranked) != 4 || len(j.Tasks) < 1 || len(j.Tasks) > 8 {
			t.Fatalf("job %+v", j)
		}
		for _, d := range j.Tasks {
			work += d
		}
	}
	if len(cl.Nodes) != 100 || flaky != 10 || cl.Nodes[99].Class != 3 {
		t.Errorf("%d nodes, %d flaky, last in class %d: want 100, 10, 3", len(cl.Nodes), flaky, cl.Nodes[99].Class)
	}
	if share := float64(first0) / float64(len(jobs)); math.Abs(share-0.5) > 0.02 {
		t.Errorf("class 0 ranked first for %.3f of jobs, want 0.5", share)
	}
	if load := work / (400 * 48 * 3600); math.Abs(load-0.55) > 0.03 {
		t.Errorf("offered load %.3f, want 0.55", load)
	}
	w := Default()
	w.Weights = w.Weights[:2]
	if _, _, err := w.Generate(1); err == nil {
		t.Error("two weights for four classes accepted")
	}
}

func TestRunRejectsBadConfigs(t *testing.T) {
	cl := Cluster{Classes: 2, Slots: 1, Nodes: []Node{{Class: 0}, {Class: 1}}}
	for _, c := range []Config{{Escalate: true}, {Chosen: 3}} {
		if _, err := Run(cl, nil, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := Run(Cluster{Classes: 1, Slots: 1, Nodes: []Node{{Class: 1}}}, nil, Config{}); err == nil {
		t.Error("a node outside the classes accepted")
	}
	if _, err := Run(cl, []Job{oneTask(5, []int{0}, 1), oneTask(1, []int{0}, 1)}, Config{}); err == nil {
		t.Error("jobs out of order accepted")
	}
}
