package main

import (
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/testbed"
)

// One command runs every policy with the same settings, an escalation
// delay applying to h alone (the only policy that escalates).
func TestTestbedRunsGiveTheEscalationDelayToHAlone(t *testing.T) {
	c := testbed.Default()
	c.EscalationDelay, c.Out, c.RunDir, c.Bin, c.StackBin = 3*time.Second, t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	runs, err := testbedRuns(c, "none,pt,h", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs, want 6", len(runs))
	}
	for _, r := range runs {
		want := time.Duration(0)
		if r.Policy == testbed.H {
			want = 3 * time.Second
		}
		if r.EscalationDelay != want {
			t.Errorf("%s seed %d: escalation delay %v, want %v", r.Policy, r.Seed, r.EscalationDelay, want)
		}
	}
}
