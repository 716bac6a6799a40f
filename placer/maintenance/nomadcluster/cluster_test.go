package nomadcluster

import (
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/placer/maintenance"
)

var planNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// TestBatchRunsFromNomadAllocations: only batch jobs' tasks that started,
// from their latest start to their finish (open while running), weighted by
// their allocated CPU; a lost allocation's task ended when the allocation
// last changed; a task waiting to restart ended at its restart.
func TestBatchRunsFromNomadAllocations(t *testing.T) {
	start := planNow.Add(-time.Hour)
	lost := nomadtest.BatchTask("lost", 300, start, time.Time{})
	lost.ClientStatus, lost.ModifyTime = nomadapi.AllocClientStatusLost, planNow.Add(-30*time.Minute).UnixNano()
	restarting := nomadtest.BatchTask("restarting", 400, start, time.Time{})
	restarting.TaskStates["work"].State, restarting.TaskStates["work"].LastRestart = "pending", planNow.Add(-10*time.Minute)
	queued := nomadtest.BatchTask("queued", 500, time.Time{}, time.Time{})
	svc := nomadtest.BatchTask("web", 600, start, time.Time{})
	svc.JobType = nomadapi.JobTypeService
	noResources := nomadtest.BatchTask("bare", 0, start, planNow)
	noResources.AllocatedResources = nil

	got := BatchRuns([]*nomadapi.AllocationListStub{
		nomadtest.BatchTask("running", 100, start, time.Time{}), nomadtest.BatchTask("done", 200, start.Add(time.Minute), planNow.Add(-time.Minute)),
		lost, restarting, queued, svc, noResources,
	})
	want := []maintenance.Alloc{
		{Job: "default/bare", Start: start, End: planNow},
		{Job: "default/lost", Start: start, End: planNow.Add(-30 * time.Minute), CPU: 300},
		{Job: "default/restarting", Start: start, End: planNow.Add(-10 * time.Minute), CPU: 400},
		{Job: "default/running", Start: start, CPU: 100},
		{Job: "default/done", Start: start.Add(time.Minute), End: planNow.Add(-time.Minute), CPU: 200},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d runs, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Job != want[i].Job || !got[i].Start.Equal(want[i].Start) || !got[i].End.Equal(want[i].End) || got[i].CPU != want[i].CPU {
			t.Errorf("run %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
