package testbed

import (
	"math"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

// A finished job's time splits into the wait for its first allocation,
// the stages' spans and the releases between them, exactly; a span into
// the tasks' waits for room, the retries of refused tasks, the starts and
// the tasks' overruns, in trace seconds; an unfinished job is left out.
func TestStageTimesSplitAFinishedJobsTime(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	j := &job{ID: "tb-1", StreamJob: schedsim.StreamJob{At: 0, Stages: [][]float64{{10, 20}, {30}}}}
	unfinished := &job{ID: "tb-2", StreamJob: schedsim.StreamJob{At: 0, Stages: [][]float64{{10}}}}
	allocs := []alloc{
		{Job: "tb-1", Group: "s1", Name: "tb-1.s1[0]", Status: "complete", Created: at(1), Started: at(1.5), Finished: at(2.5)},
		{Job: "tb-1", Group: "s1", Name: "tb-1.s1[1]", Status: "failed", Refused: true, Created: at(1.5)},
		{Job: "tb-1", Group: "s1", Name: "tb-1.s1[1]", Status: "complete", Created: at(3), Started: at(3.2), Finished: at(5.4)},
		{Job: "tb-1.s2", Group: "s2", Name: "tb-1.s2.s2[0]", Status: "complete", Created: at(6), Started: at(6.5), Finished: at(9.5)},
		{Job: "tb-2", Group: "s1", Name: "tb-2.s1[0]", Status: "running", Created: at(1), Started: at(2)},
	}
	c := Config{Policy: PT, Seed: 1, Speedup: 10, NodeCores: 12, TraceHours: 1}
	rep := c.report([]*job{j, unfinished}, allocs, func(string, time.Time) (float64, bool) { return 0, false }, t0, t0, at(60), 0.05)
	got := rep.StageTimes
	if got == nil {
		t.Fatal("no stage times for a finished job")
	}
	near := func(name string, v, want float64) {
		if math.Abs(v-want) > 1e-6 {
			t.Errorf("%s %.4f, want %.4f", name, v, want)
		}
	}
	if got.Jobs != 1 {
		t.Fatalf("jobs %d, want 1 (the unfinished one left out)", got.Jobs)
	}
	near("stages", got.Stages, 2)
	near("critical path", got.CriticalPath, 50)
	near("job time", rep.JobSeconds.Mean, 95)
	near("to first allocation", got.FirstStage.Mean, 10)
	near("release", got.Release.Mean, 6)
	near("stage span", got.Span.Mean, (44+35)/2.0)
	near("first + spans + releases = job time", got.FirstStage.Mean+got.Stages*got.Span.Mean+(got.Stages-1)*got.Release.Mean, rep.JobSeconds.Mean)
	near("queue", got.Queue.Mean, 5.0/3)
	near("queue p90", got.Queue.P90, 5)
	near("retry", got.Retry.Mean, 15.0/3)
	near("retry p90", got.Retry.P90, 15)
	near("start", got.Start.Mean, 4)
	near("overrun", got.Overrun.Mean, 2.0/3)
}

// The finished jobs split by whether a task of theirs took more than one
// allocation: what the retries cost a job.
func TestStageTimesSplitJobsWithARetryFromClean(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	retried := &job{ID: "tb-1", StreamJob: schedsim.StreamJob{At: 0, Stages: [][]float64{{10}}}}
	clean := &job{ID: "tb-2", StreamJob: schedsim.StreamJob{At: 0, Stages: [][]float64{{10, 10}}}}
	allocs := []alloc{
		{Job: "tb-1", Group: "s1", Name: "tb-1.s1[0]", Status: "failed", Refused: true, Created: at(1)},
		{Job: "tb-1", Group: "s1", Name: "tb-1.s1[0]", Status: "complete", Created: at(6), Started: at(6.5), Finished: at(7.5)},
		{Job: "tb-2", Group: "s1", Name: "tb-2.s1[0]", Status: "complete", Created: at(1), Started: at(1.5), Finished: at(2.5)},
		{Job: "tb-2", Group: "s1", Name: "tb-2.s1[1]", Status: "complete", Created: at(1), Started: at(1.5), Finished: at(2)},
	}
	c := Config{Policy: H, Seed: 1, Speedup: 10, NodeCores: 12, TraceHours: 1}
	got := c.report([]*job{retried, clean}, allocs, func(string, time.Time) (float64, bool) { return 0, false }, t0, t0, at(60), 0.05).StageTimes
	if got == nil || got.Retried.N != 1 || got.Retried.Mean != 75 || got.Clean.N != 1 || got.Clean.Mean != 25 {
		t.Fatalf("retried %+v, clean %+v; want one job of 75 s and one of 25 s", got.Retried, got.Clean)
	}
}
