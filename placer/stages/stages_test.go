package stages

import "testing"

func TestStagesStartInOrderAndStopOnFailure(t *testing.T) {
	groups := []Group{
		{Name: "extract", Count: 2, Declared: 2, Active: 2},
		{Name: "transform", After: []string{"extract"}, Declared: 3},
		{Name: "load", After: []string{"transform"}, Declared: 1},
	}
	if acts := Next(groups); len(acts) != 0 {
		t.Fatalf("acted while extract runs: %+v", acts)
	}
	groups[0].Active, groups[0].Complete = 0, 2
	acts := Next(groups)
	if len(acts) != 1 || acts[0].Group != "transform" || acts[0].Count != 3 || acts[0].Error {
		t.Fatalf("after extract: %+v", acts)
	}
	groups[1].Count, groups[1].Active = 3, 3 // scaled and running
	if acts := Next(groups); len(acts) != 0 {
		t.Fatalf("acted twice or early: %+v", acts)
	}
	groups[1].Active, groups[1].Complete, groups[1].Failed = 0, 2, 1 // one task failed for good
	acts = Next(groups)
	if len(acts) != 1 || acts[0].Group != "load" || !acts[0].Error || acts[0].Message != `harvest: stage "load" not started: upstream stage transform failed` {
		t.Fatalf("after a failure: %+v", acts)
	}
}

func TestEvictedThenReplacedTaskIsNotAFailure(t *testing.T) {
	// an evicted allocation whose replacement is running counts as active, not failed
	groups := []Group{
		{Name: "a", Count: 1, Declared: 1, Active: 1},
		{Name: "b", After: []string{"a"}, Declared: 1},
	}
	if acts := Next(groups); len(acts) != 0 {
		t.Fatalf("%+v", acts)
	}
}
