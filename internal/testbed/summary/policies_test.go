package summary

import (
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/internal/standin"
	"github.com/harvest-platform/harvest/internal/testbed"
)

// Over several seeds the summary has a row per policy with each figure's
// mean and min-max, the simulator's beside the testbed's, and the real
// primary's p99 per minute; the no-harvesting runs have no job figures.
func TestPolicyTableGivesEachPolicysSpreadOverSeeds(t *testing.T) {
	run := func(p testbed.Policy, seed uint64, finished int, mean float64, kills int, simMean float64, p99 float64) *testbed.Report {
		return &testbed.Report{Policy: p, Seed: seed, RoomDevice: true, FinishedInSpan: finished, JobSecondsInSpan: testbed.Summary{Mean: mean},
			Kills: kills, SimulatorWithDelay: &testbed.SimPrediction{MeanJobSeconds: simMean, Kills: 1},
			RealPrimary: &testbed.RealPrimaryReport{Minutes: []standin.Minute{{}}, P99PerMinute: testbed.Summary{Mean: p99, P90: 2 * p99}, WaitPerCPUSecond: p99 / 1000}}
	}
	table := policyTable([]*testbed.Report{
		run(testbed.None, 1, 0, 0, 0, 0, 200), run(testbed.H, 1, 14, 100, 0, 90, 300), run(testbed.PT, 1, 12, 150, 2, 90, 250),
		run(testbed.None, 2, 0, 0, 0, 0, 220), run(testbed.H, 2, 16, 140, 2, 110, 320), run(testbed.PT, 2, 14, 160, 4, 110, 270),
	})
	for _, want := range []string{
		"| none (room device) | 1,2 | - | - | - | - | - | - | - | - | 0 | 210 (200-220) | 420 (400-440) | 0.21 (0.20-0.22) |",
		"| h (room device) | 1,2 | 15 (14-16) | 120 (100-140) | 100 (90-110) | 1 (0-2) | 1 | 0 | 0 | 0 | 0 | 310 (300-320) | 620 (600-640) | 0.31 (0.30-0.32) |",
		"| pt (room device) | 1,2 | 13 (12-14) | 155 (150-160) | 100 (90-110) | 3 (2-4) | 1 |",
	} {
		if !strings.Contains(table, want) {
			t.Fatalf("table\n%s\nwant the row %q", table, want)
		}
	}
	if got := policyTable([]*testbed.Report{run(testbed.H, 1, 14, 100, 0, 90, 300), run(testbed.PT, 1, 12, 150, 2, 90, 250)}); got != "" {
		t.Fatalf("one seed per policy: want no table, got\n%s", got)
	}
}
