package greylist

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func TestOnlyNodeFaultsGreylistAndCountersReset(t *testing.T) {
	tr := NewTracker(3, 4*time.Hour, t0)
	for i := 0; i < 5; i++ {
		tr.Record("n1", Evicted, t0)
		tr.Record("n1", Preempted, t0)
		tr.Record("n1", TaskFault, t0)
	}
	if g := tr.Greylisted(t0); len(g) != 0 {
		t.Fatalf("evictions, preemptions and task limits greylisted %v", g)
	}
	for i := 0; i < 3; i++ {
		tr.Record("n2", NodeFault, t0.Add(time.Minute))
	}
	tr.Record("n3", NodeFault, t0)
	if g := tr.Greylisted(t0.Add(time.Hour)); !slices.Equal(g, []string{"n2"}) {
		t.Fatalf("greylisted %v, want n2", g)
	}
	if g := tr.Greylisted(t0.Add(5 * time.Hour)); len(g) != 0 {
		t.Fatalf("counters not reset after 4h: %v", g)
	}
}

func TestCountsResetOnSchedule(t *testing.T) {
	t0 := time.Unix(0, 0)
	tr := NewTracker(3, time.Hour, t0)
	tr.Record("a", NodeFault, t0)
	tr.Record("a", Evicted, t0)
	if c := tr.Counts(t0.Add(time.Minute)); c["a"] != 1 || len(c) != 1 {
		t.Fatalf("counts %v", c)
	}
	if c := tr.Counts(t0.Add(2 * time.Hour)); len(c) != 0 {
		t.Fatalf("counts after reset %v", c)
	}
}
