package summary

import (
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/internal/testbed"
)

// The stage table has a row for each run with finished jobs, none for a
// run without.
func TestStageTableRowsRunsWithFinishedJobs(t *testing.T) {
	rep := &testbed.Report{Policy: testbed.PT, Seed: 1, JobSeconds: testbed.Summary{Mean: 95},
		SimulatorWithStageDelay: &testbed.SimPrediction{Finished: 1, MeanJobSeconds: 91, StartDelay: 4, StageDelay: 6}, StageTimes: &testbed.StageTimes{
			Jobs: 1, Stages: 2, CriticalPath: 50, FirstStage: testbed.Summary{Mean: 10}, Release: testbed.Summary{Mean: 6, P90: 6},
			Span: testbed.Summary{Mean: 39.5, P90: 44}, Queue: testbed.Summary{Mean: 5.0 / 3, P90: 5},
			Retry: testbed.Summary{Mean: 20.0 / 3, P90: 20}, Start: testbed.Summary{Mean: 4}, Overrun: testbed.Summary{Mean: 2.0 / 3, P90: 2},
			Retried: testbed.Summary{N: 1, Mean: 95},
		}}
	table := stageTable([]*testbed.Report{rep, {Policy: testbed.None, Seed: 1}})
	if !strings.Contains(table, "| pt | 1 | 1 | 2.0 | 50 | 95 | 10.0 | 39.5 (44.0) | 6.0 (6.0) | 1.7 (5.0) | 6.7 (20.0) | 4.0 | 0.7 (2.0) | 1, 95 | 0, 0 | 1, 91 |") || strings.Contains(table, "| none |") {
		t.Fatalf("table\n%s\nwant a row for the run with finished jobs only", table)
	}
}

// An unfinished job has a row per Nomad job, with why a group waits.
func TestUnfinishedTableSaysWhyAStageWaits(t *testing.T) {
	rep := &testbed.Report{Policy: testbed.H, Seed: 1, UnfinishedJobs: []testbed.UnfinishedJob{{ID: "tb-00008", Class: "periodic-2", Stages: 6,
		Nomad: []testbed.NomadJobAtEnd{{ID: "tb-00008.s2", Status: "running", Groups: map[string]string{"s2": "1/0/0/3/0/11"},
			Evaluations: map[string]int{"blocked": 1, "complete": 4}, Blocked: map[string]string{"s2": "7 nodes evaluated; 7 exhausted (devices: harvest/room/cpu: 7)"}}}}}}
	want := "| h | 1 | tb-00008 | periodic-2 | 6 | tb-00008.s2 | running | s2 1/0/0/3/0/11 | blocked 1; complete 4 | s2 7 nodes evaluated; 7 exhausted (devices: harvest/room/cpu: 7) |"
	if got := unfinishedTable([]*testbed.Report{rep, {Policy: testbed.PT, Seed: 1}}); !strings.Contains(got, want) || strings.Contains(got, "| pt |") {
		t.Fatalf("table\n%s\nwant the row %s and none for the run with every job finished", got, want)
	}
}
