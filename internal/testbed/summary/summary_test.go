package summary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/internal/standin"
	"github.com/harvest-platform/harvest/internal/testbed"
)

// The summary has a row per run with a real primary and Figure 10's plot.
func TestSummaryHasTheRealPrimary(t *testing.T) {
	dir := t.TempDir()
	rp := &testbed.RealPrimaryReport{Node: "client-1", Tenant: "dc-9/t1", CPU: 1, Requests: 200, Failed: 2, WaitPerCPUSecond: 0.25,
		Minutes:                 []standin.Minute{{Minute: 0, Requests: 100, P99ms: 4}, {Minute: 1, TraceHours: 0.2, Requests: 100, Failed: 2, P99ms: 9}},
		P99PerMinute:            testbed.Summary{N: 2, Mean: 6.5, P50: 4, P90: 9, P99: 9, Max: 9},
		HandlerWaitP99PerMinute: &testbed.Summary{N: 2, Mean: 1.5, Max: 2}, OutsideHandlerP99PerMinute: &testbed.Summary{N: 2, Mean: 3.25, Max: 5},
		Load: "SCHED_FIFO on CPUs 0"}
	old := *rp // a run from before the split, its load in the testbed's process
	old.HandlerWaitP99PerMinute, old.OutsideHandlerP99PerMinute, old.Load = nil, nil, ""
	if err := Write(dir, []*testbed.Report{{Policy: testbed.None, Seed: 1, RealPrimary: rp}, {Policy: testbed.H, Seed: 1}, {Policy: testbed.PT, Seed: 1, RealPrimary: &old}}); err != nil {
		t.Fatal(err)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(table), "| none | 1 | client-1 (dc-9/t1), 1; load at SCHED_FIFO on CPUs 0 | 2 | 200, 2 | 6.5, 4.0, 9.0, 9.0 | 0.250 | 1.5, 2.0 | 3.2, 5.0 |") {
		t.Fatalf("summary %q: want the real primary's row with its tail split", table)
	}
	if !strings.Contains(string(table), "| pt | 1 | client-1 (dc-9/t1), 1; load in the testbed's process | 2 |") ||
		!strings.Contains(string(table), "| 0.250 | not recorded | not recorded |") {
		t.Fatalf("summary %q: want a run without the split said so", table)
	}
	if fi, err := os.Stat(filepath.Join(dir, "primary-p99.png")); err != nil || fi.Size() == 0 {
		t.Fatalf("primary-p99.png: %v", err)
	}
}

// The summary has a row per run, its blob tier's counts among them, and
// plots the job times and the utilisation.
func TestSummaryWritesTheTableAndPlots(t *testing.T) {
	dir := t.TempDir()
	r := &testbed.Report{Policy: testbed.H, Seed: 2, JobSecondsAll: []float64{100, 300}, Blob: &testbed.BlobReport{Objects: 32, Reads: 40, ReadFailures: 1, BusyDenials: 3},
		Utilisation: []testbed.UtilisationPoint{{TraceSeconds: 0, Harvested: 0.1, Primary: 0.4}, {TraceSeconds: 600, Harvested: 0.2, Primary: 0.5}}}
	deviated := &testbed.Report{Policy: testbed.PT, Seed: 2, NoRoomRule: true, SchedulerAlgorithm: "spread"}
	device := &testbed.Report{Policy: testbed.H, Seed: 2, RoomDevice: true}
	if err := Write(dir, []*testbed.Report{r, deviated, device}); err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.Contains(string(table), "| 40, 1, 3, 0 of 32 |") {
		t.Fatalf("summary %q (%v): want the blob counts", table, err)
	}
	if !strings.Contains(string(table), "\n| h | 2 |") || !strings.Contains(string(table), "\n| pt (no room rule, spread) | 2 |") ||
		!strings.Contains(string(table), "\n| h (room device) | 2 |") {
		t.Fatalf("summary %q: want each run's policy with its deviations", table)
	}
	for _, png := range []string{"job-times.png", "utilisation.png"} {
		if fi, err := os.Stat(filepath.Join(dir, png)); err != nil || fi.Size() == 0 {
			t.Fatalf("%s: %v", png, err)
		}
	}
}
