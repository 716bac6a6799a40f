package dag

import (
	"errors"
	"strings"
	"testing"
)

func TestPeakIsTheLargestLevel(t *testing.T) {
	est, err := Plan([]Stage{
		{Name: "extract", Count: 4, CPU: 100, MemoryMB: 64},
		{Name: "dims", Count: 2, CPU: 100, MemoryMB: 64},
		{Name: "join", After: []string{"extract", "dims"}, Count: 3, CPU: 200, MemoryMB: 128},
		{Name: "report", After: ParseAfter(" join "), Count: 1, CPU: 50, MemoryMB: 32},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Levels) != 3 || strings.Join(est.Levels[0], ",") != "dims,extract" {
		t.Fatalf("levels %v", est.Levels)
	}
	if est.Peak != (Resources{CPU: 600, MemoryMB: 384, Tasks: 6}) {
		t.Fatalf("peak %+v, want the first level (extract+dims)", est.Peak)
	}
}

// TestTPCDSLikeDAG follows the shape of the paper's Figure 7 (TPC-DS query
// 19): map stages scanning fact and dimension tables fan into joins and a
// final aggregation; the widest level is the big join, 469 tasks, the
// paper's estimate for that query.
func TestTPCDSLikeDAG(t *testing.T) {
	stages := []Stage{
		{Name: "map1", Count: 169, CPU: 100, MemoryMB: 256}, // store_sales scan
		{Name: "map2", Count: 1, CPU: 100, MemoryMB: 256},   // date_dim
		{Name: "map3", Count: 1, CPU: 100, MemoryMB: 256},   // item
		{Name: "map4", Count: 2, CPU: 100, MemoryMB: 256},   // customer
		{Name: "map5", Count: 1, CPU: 100, MemoryMB: 256},   // customer_address
		{Name: "map6", Count: 1, CPU: 100, MemoryMB: 256},   // store
		{Name: "reducer2", After: []string{"map1", "map2", "map3"}, Count: 469, CPU: 100, MemoryMB: 256},
		{Name: "reducer3", After: []string{"reducer2", "map4", "map5", "map6"}, Count: 45, CPU: 100, MemoryMB: 256},
		{Name: "reducer4", After: []string{"reducer3"}, Count: 1, CPU: 100, MemoryMB: 256},
	}
	est, err := Plan(stages)
	if err != nil {
		t.Fatal(err)
	}
	if est.Peak.Tasks != 469 || len(est.Levels) != 4 {
		t.Fatalf("peak %+v over %d levels %v", est.Peak, len(est.Levels), est.Levels)
	}
	if est.Level[0].Tasks != 175 {
		t.Fatalf("first level %+v", est.Level[0])
	}
}

func TestBadGraphsNameTheGroup(t *testing.T) {
	cases := map[string]struct {
		stages []Stage
		want   string
	}{
		"cycle": {[]Stage{{Name: "a", After: []string{"c"}}, {Name: "b", After: []string{"a"}}, {Name: "c", After: []string{"b"}}, {Name: "d"}},
			`task group "a": is in a cycle of harvest_after (a, b, c)`},
		"self":    {[]Stage{{Name: "a", After: []string{"a"}}}, `task group "a": lists itself`},
		"unknown": {[]Stage{{Name: "a"}, {Name: "b", After: []string{"x"}}}, `task group "b": harvest_after names "x"`},
		"twice":   {[]Stage{{Name: "a"}, {Name: "a"}}, `task group "a": appears twice`},
	}
	for name, tc := range cases {
		_, err := Plan(tc.stages)
		var ge *Error
		if !errors.As(err, &ge) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

func FuzzParseAfter(f *testing.F) {
	f.Add("a, b,,c ")
	f.Fuzz(func(t *testing.T, v string) {
		for _, s := range ParseAfter(v) {
			if s == "" || strings.Contains(s, ",") || strings.TrimSpace(s) != s {
				t.Fatalf("bad stage name %q from %q", s, v)
			}
		}
	})
}
