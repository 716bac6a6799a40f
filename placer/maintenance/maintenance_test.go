package maintenance

import (
	"testing"
	"time"
)

var day = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

func TestAccumulatedWorkAndRunningJobs(t *testing.T) {
	at := day.Add(time.Hour)
	allocs := []Alloc{
		{Job: "a", Start: day, End: day.Add(2 * time.Hour), CPU: 10}, // 3600 s x 10
		{Job: "a", Start: day.Add(30 * time.Minute), CPU: 2},         // still running: 1800 s x 2
		{Job: "b", Start: day, End: day.Add(30 * time.Minute), CPU: 99},
	}
	if w := AccumulatedWork(allocs, at); w != 36000+3600 {
		t.Fatalf("AW = %.0f", w)
	}
	if n := RunningJobs(allocs, at); n != 1 {
		t.Fatalf("CL = %.0f", n)
	}
}

func TestThresholdAndDecision(t *testing.T) {
	p := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if th, _ := Threshold(p, 10); th != 2 {
		t.Fatalf("P10 = %.0f", th)
	}
	if th, _ := Threshold(p, 90); th != 10 {
		t.Fatalf("P90 = %.0f", th)
	}
	if _, err := Threshold(p, 0); err == nil {
		t.Fatal("urgency 0 accepted")
	}
	if d := Decide(5, 4, day, day.Add(time.Hour)); d.Start {
		t.Fatalf("%+v", d)
	}
	if d := Decide(5, 4, day.Add(time.Hour), day.Add(time.Hour)); !d.Start {
		t.Fatalf("deadline ignored: %+v", d)
	}
	if d := Decide(3, 4, day, time.Time{}); !d.Start {
		t.Fatalf("%+v", d)
	}
}

// TestReplayStartsAtTheFirstQuietMomentOrTheDeadline: a light job runs
// 00:00-01:00 and a heavy one 01:30-03:00; with a threshold only an idle
// cluster meets, maintenance requested at 00:30 starts at 01:00, when the
// light job ends, forfeiting nothing; with a deadline at 00:45 it starts
// then and forfeits the light job's 45 minutes.
func TestReplayStartsAtTheFirstQuietMomentOrTheDeadline(t *testing.T) {
	allocs := []Alloc{
		{Job: "light", Start: day, End: day.Add(time.Hour), CPU: 1},
		{Job: "heavy", Start: day.Add(90 * time.Minute), End: day.Add(3 * time.Hour), CPU: 100},
	}
	at, lost := Replay(allocs, AccumulatedWork, 0, day.Add(30*time.Minute), day.Add(5*time.Hour), 5*time.Minute)
	if !at.Equal(day.Add(time.Hour)) || lost != 0 {
		t.Fatalf("started at %s forfeiting %.0f, want 01:00 and nothing", at.Format("15:04"), lost)
	}
	at, lost = Replay(allocs, AccumulatedWork, 0, day.Add(30*time.Minute), day.Add(45*time.Minute), 5*time.Minute)
	if !at.Equal(day.Add(45*time.Minute)) || lost != 45*60 {
		t.Fatalf("started at %s forfeiting %.0f, want the 00:45 deadline and 2700", at.Format("15:04"), lost)
	}
	// CL: one job running at 00:30 is as "quiet" as one at 02:00, though the
	// heavy job has 30 minutes x 100 at stake by then
	th := 1.0
	at, _ = Replay(allocs, RunningJobs, th, day.Add(30*time.Minute), day.Add(5*time.Hour), 5*time.Minute)
	if !at.Equal(day.Add(30 * time.Minute)) {
		t.Fatalf("CL started at %s", at.Format("15:04"))
	}
}

func TestParseDeadline(t *testing.T) {
	if d, err := ParseDeadline("2h", day); err != nil || !d.Equal(day.Add(2*time.Hour)) {
		t.Fatalf("2h: %s %v", d, err)
	}
	if d, err := ParseDeadline("2026-11-20T06:00:00+01:00", day); err != nil || !d.Equal(day.Add(5*time.Hour)) {
		t.Fatalf("RFC3339: %s %v", d, err)
	}
	for _, bad := range []string{"", "-1h", "tomorrow", "2026-11-20 06:00"} {
		if _, err := ParseDeadline(bad, day); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestRanCountsRunsOverlappingTheWindow: a run that ended before the window
// or starts at its end did not run in it; one still running did.
func TestRanCountsRunsOverlappingTheWindow(t *testing.T) {
	from, to := day.Add(time.Hour), day.Add(2*time.Hour)
	allocs := []Alloc{
		{Job: "before", Start: day, End: from},
		{Job: "after", Start: to},
		{Job: "a", Start: day, End: from.Add(time.Second)},
		{Job: "a", Start: from.Add(time.Minute), End: from.Add(2 * time.Minute)},
		{Job: "open", Start: day},
	}
	if runs, jobs := Ran(allocs, from, to); runs != 3 || jobs != 2 {
		t.Fatalf("Ran = %d runs of %d jobs, want 3 of 2", runs, jobs)
	}
}
