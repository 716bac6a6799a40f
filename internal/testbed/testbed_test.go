package testbed

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/jobspec2"

	"github.com/harvest-platform/harvest/placer/dag"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// A stream job becomes a job Nomad reads as the proxy's DAG: a group per
// stage, each after the one before, count the stage's tasks, one core each,
// its lengths at the speed-up picked by the allocation index.
func TestJobHCLIsTheStreamJobsDAG(t *testing.T) {
	j := &job{ID: "tb-h-1-00001", StreamJob: schedsim.StreamJob{At: 10, Class: "short", Stages: [][]float64{{120, 60}, {30}}}}
	for _, p := range []Policy{H, Stock} {
		src := jobHCL(j, jobSpec{Policy: p, MHzPerCore: 2500, Speedup: 12, Bounded: p == Stock})
		parsed, err := jobspec2.ParseWithConfig(&jobspec2.ParseConfig{Path: "job.hcl", Body: []byte(src), Strict: true})
		if err != nil {
			t.Fatalf("%s:\n%s", err, src)
		}
		raw, _ := json.Marshal(parsed)
		var tree map[string]any
		_ = json.Unmarshal(raw, &tree)
		stages, err := proxy.StagesOf(tree)
		if err != nil {
			t.Fatal(err)
		}
		est, err := dag.Plan(stages)
		if err != nil {
			t.Fatal(err)
		}
		if len(stages) != 2 || stages[0].Count != 2 || stages[1].Count != 1 || stages[1].After[0] != "s1" || est.Peak.CPU != 5000 {
			t.Fatalf("stages %+v, peak %+v", stages, est.Peak)
		}
		task := parsed.TaskGroups[0].Tasks[0]
		args := task.Config["args"].([]any)[1].(string)
		if !strings.Contains(args, "set -- 10.00 5.00;") || !strings.Contains(args, "shift ${NOMAD_ALLOC_INDEX}") {
			t.Fatalf("args %q", args)
		}
		if want := map[Policy]string{H: "harvest", Stock: "raw_exec"}[p]; task.Driver != want {
			t.Fatalf("%s: driver %s", p, task.Driver)
		}
		if r := parsed.TaskGroups[1].ReschedulePolicy; (r != nil && *r.Attempts == 5 && !*r.Unlimited) != (p == Stock) {
			t.Fatalf("%s: reschedule %+v, want the bounded block only when asked", p, r)
		}
	}
}

// A job finishes when every stage has as many completed allocations as
// tasks, counted by name (a rescheduled allocation replaces its failed
// one), at its last task's end.
func TestAJobFinishesWhenEveryStageCompletes(t *testing.T) {
	j := &job{ID: "j", StreamJob: schedsim.StreamJob{Stages: [][]float64{{1, 1}, {1}}}}
	t0 := time.Unix(1000, 0)
	allocs := []alloc{
		{Job: "j", Group: "s1", Name: "j.s1[0]", Status: "complete", Finished: t0},
		{Job: "j", Group: "s1", Name: "j.s1[1]", Status: "failed", Evicted: true},
		{Job: "j", Group: "s1", Name: "j.s1[1]", Status: "complete", Finished: t0.Add(time.Second)},
	}
	if _, ok := jobOutcome(j, allocs); ok {
		t.Fatal("finished without its second stage")
	}
	allocs = append(allocs, alloc{Job: "j.s2", Group: "s2", Name: "j.s2.s2[0]", Status: "complete", Finished: t0.Add(5 * time.Second)})
	by := ofJob(allocs)
	end, ok := jobOutcome(j, by["j"])
	if !ok || !end.Equal(t0.Add(5*time.Second)) || len(by["j"]) != 4 {
		t.Fatalf("finished %v at %v; grouped %d", ok, end, len(by["j"]))
	}
}

// A breach is a span in which the primary's cores plus one per running
// harvested allocation exceed the node's: here a 12-core node whose
// primary goes from 50% to 75% at the second slot (9 cores), with 4
// allocations running until 2 s into that slot, breaches for 2 s.
func TestABreachLastsUntilTheAllocationsFitAgain(t *testing.T) {
	began := time.Unix(5000, 0)
	slotWall := 10 * time.Second // 120 s at x12
	allocs := []alloc{}
	for i := range 4 {
		end := began.Add(slotWall + 2*time.Second)
		if i == 0 {
			end = began.Add(25 * time.Second) // the fourth-youngest stays: 9+1 fits
		}
		allocs = append(allocs, alloc{Node: "n", Started: began.Add(time.Second), Finished: end})
	}
	levels := func(_ string, wall time.Time) (float64, bool) {
		return []float64{6, 9, 9}[int(wall.Sub(began)/slotWall)], true
	}
	got := breaches(allocs, levels, 12, began, began.Add(30*time.Second), slotWall)
	if len(got) != 1 || got[0] != 2 {
		t.Fatalf("breaches %v, want one of 2 s", got)
	}
}

func TestKillReasonsAreTheDriversOwn(t *testing.T) {
	for msg, want := range map[string]string{
		"evicted: the primary tenant has not been measured for 3.2s; harvesting stops until it is measured again": "stale",
		"evicted: primary tenant needs 9 cores and 100 MiB; the memory reserve was short by 12 MiB":               "memory",
		"evicted: primary tenant needs 9 cores and 100 MiB; harvested tasks were capped at 2.00 cores":            "cpu",
	} {
		if got := killReason(msg); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
	}
}

func TestSummaryPercentiles(t *testing.T) {
	s := summarize([]float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10})
	if s.N != 10 || s.Mean != 5.5 || s.P50 != 5 || s.P90 != 9 || s.Max != 10 {
		t.Fatalf("%+v", s)
	}
}

// Utilisation averages over each window: an allocation running half a
// window on one of two 4-core clients holds 1/16 of the cores there; the
// primaries' replayed cores count alike.
func TestUtilisationAveragesEachWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	allocs := []alloc{
		{Node: "a", Started: t0.Add(5 * time.Second), Finished: t0.Add(10 * time.Second)},
		{Node: "b", Started: t0.Add(10 * time.Second)}, // still running at the end
		{Node: "b", Created: t0}, // never started: holds nothing
	}
	primary := func(node string, _ time.Time) (float64, bool) {
		if node == "a" {
			return 2, true
		}
		return 0, true
	}
	got := utilisation(allocs, primary, []string{"a", "b"}, 4, t0, t0.Add(20*time.Second), 10*time.Second, 6)
	want := []UtilisationPoint{{0, 0.5 / 8, 2.0 / 8}, {60, 1.0 / 8, 2.0 / 8}}
	if len(got) != len(want) {
		t.Fatalf("points %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].TraceSeconds != want[i].TraceSeconds || math.Abs(got[i].Harvested-want[i].Harvested) > 1e-9 || math.Abs(got[i].Primary-want[i].Primary) > 1e-9 {
			t.Fatalf("point %d %+v, want %+v", i, got[i], want[i])
		}
	}
}

// An unfinished job's Nomad job says its groups' counts and, from its
// newest blocked evaluation, why a group waits.
func TestAtEndSaysWhyAGroupWaits(t *testing.T) {
	stub := &nomadapi.JobListStub{ID: "tb-00008.s2", Status: "running"}
	sum := &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"s2": {Queued: 1, Running: 2, Failed: 3, Complete: 8}}}
	evals := []*nomadapi.Evaluation{
		{Status: "complete", CreateIndex: 10},
		{Status: "blocked", CreateIndex: 20, FailedTGAllocs: map[string]*nomadapi.AllocationMetric{"s2": {NodesEvaluated: 3}}},
		{Status: "blocked", CreateIndex: 30, FailedTGAllocs: map[string]*nomadapi.AllocationMetric{"s2": {
			NodesEvaluated: 7, NodesFiltered: 2, ConstraintFiltered: map[string]int{"${meta.harvest_class} = periodic-2": 2},
			NodesExhausted: 5, DimensionExhausted: map[string]int{"devices: harvest/room/cpu": 5}}}},
	}
	got := atEnd(stub, sum, evals)
	if got.Groups["s2"] != "1/0/2/3/0/8" || got.Evaluations["blocked"] != 2 || got.Evaluations["complete"] != 1 {
		t.Fatalf("groups %v, evaluations %v", got.Groups, got.Evaluations)
	}
	want := "7 nodes evaluated; 2 filtered (${meta.harvest_class} = periodic-2: 2); 5 exhausted (devices: harvest/room/cpu: 5)"
	if got.Blocked["s2"] != want {
		t.Fatalf("blocked %q, want the newest blocked evaluation's %q", got.Blocked["s2"], want)
	}
}
