//go:build acceptance

package acceptance

import (
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// TestPartlyPlacedJobEscalatesWithoutRestartingItsTask
// (placement-escalation.txt, placement escalation): a job of two tasks
// whose classes hold one finds it placed and the other queued; after its
// own delay the placer widens its class rule by constraints alone, and the
// queued task runs on the next class while the running one goes on, the
// same allocation updated in place to the new version, never restarted.
// With the step in the meta, as a blocked job's, Nomad would restart it.
func TestPartlyPlacedJobEscalatesWithoutRestartingItsTask(t *testing.T) {
	proxyAddr, constant, periodic := escalationClasses(t, "harvest-escalation-partial/")
	n := cluster.NomadClients
	fillMemory(t, n[0].Name)
	fillMemoryLeaving(t, n[1].Name, 150) // room for one 100 MB task

	job := uniqueName("acc-partial")
	purgeJob(t, job)
	runVia(t, proxyAddr, policyJob(t, job, 2, 100, "sleep 180", `harvest_escalate_after = "20s"`, ""))
	// one task runs on the constant node with room for one (on a slow
	// machine the escalation may come before it runs: it is placed already)
	var first *nomadapi.AllocationListStub
	pollAllocs(t, job, "a task running on "+n[1].Name, time.Minute, func(allocs []*nomadapi.AllocationListStub) bool {
		for _, a := range allocs {
			if isRunning(a) && a.NodeName == n[1].Name {
				first = a
			}
		}
		return first != nil
	})
	allocs := waitAllocs(t, job, 2, 2*time.Minute, isRunning)
	registered, _, err := nomadClient(t).Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("version %d, constraints %v, meta %v", *registered.Version, registered.Constraints, registered.Meta)
	if *registered.Version < 1 || !hasConstraint(registered, "${meta.harvest_class}", "set_contains_any", periodic) {
		t.Fatalf("version %d, constraints %v: want a new version on %s and %s", *registered.Version, registered.Constraints, constant, periodic)
	}
	if first.CreateIndex >= *registered.JobModifyIndex {
		t.Fatalf("the first allocation (index %d) is not older than the escalation (index %d)", first.CreateIndex, *registered.JobModifyIndex)
	}
	if step := registered.Meta["harvest_escalation"]; step != "" {
		t.Fatalf("meta harvest_escalation = %q: a partly placed job's meta must stay as it was", step)
	}
	for _, a := range allocs {
		switch a.ID {
		case first.ID:
			if a.JobVersion != *registered.Version {
				t.Errorf("the running task's allocation is of version %d, want %d (updated in place)", a.JobVersion, *registered.Version)
			}
			for task, st := range a.TaskStates {
				if st.Restarts != 0 || !st.StartedAt.Equal(first.TaskStates[task].StartedAt) {
					t.Errorf("task %s restarted: %d restarts, started %s, first started %s", task, st.Restarts, st.StartedAt, first.TaskStates[task].StartedAt)
				}
			}
		default:
			if a.NodeName != n[2].Name {
				t.Errorf("the escalated task runs on %s, want %s (class %s)", a.NodeName, n[2].Name, periodic)
			}
		}
	}
	if allocs[0].ID != first.ID && allocs[1].ID != first.ID {
		t.Fatalf("the first allocation %s is gone: %s and %s run", first.ID, allocs[0].ID, allocs[1].ID)
	}
}
