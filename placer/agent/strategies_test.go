package agent

import (
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/escalation"
	"github.com/harvest-platform/harvest/placer/greylist"
)

func TestFailureKindLeavesOutEvictionsPreemptionsAndOOM(t *testing.T) {
	event := func(ev *nomadapi.TaskEvent) map[string]*nomadapi.TaskState {
		return map[string]*nomadapi.TaskState{"t": {Events: []*nomadapi.TaskEvent{{Type: "Started"}, ev}}}
	}
	for name, tc := range map[string]struct {
		alloc nomadapi.AllocationListStub
		want  greylist.FailureKind
	}{
		"exit 1": {nomadapi.AllocationListStub{ClientStatus: "failed",
			TaskStates: event(&nomadapi.TaskEvent{Type: "Terminated", Details: map[string]string{"exit_code": "1"}})}, greylist.NodeFault},
		"lost": {nomadapi.AllocationListStub{ClientStatus: "lost"}, greylist.NodeFault},
		"evicted by the reserve": {nomadapi.AllocationListStub{ClientStatus: "failed",
			TaskStates: event(&nomadapi.TaskEvent{Type: "Driver", DisplayMessage: "evicted: primary tenant needs 2 cores",
				Details: map[string]string{"harvest.evicted": "true"}})}, greylist.Evicted},
		"evicted, message only": {nomadapi.AllocationListStub{ClientStatus: "failed",
			TaskStates: event(&nomadapi.TaskEvent{Type: "Terminated", Message: "evicted: primary tenant needs 2 cores"})}, greylist.Evicted},
		"preempted": {nomadapi.AllocationListStub{ClientStatus: "failed", PreemptedByAllocation: "x"}, greylist.Preempted},
		"oom": {nomadapi.AllocationListStub{ClientStatus: "failed",
			TaskStates: event(&nomadapi.TaskEvent{Type: "Terminated", Details: map[string]string{"oom_killed": "true"}})}, greylist.TaskFault},
	} {
		if got := failureKind(&tc.alloc); got != tc.want {
			t.Errorf("%s: %s, want %s", name, got, tc.want)
		}
	}
}

func TestBlockedMeansQueuedWithNothingPlaced(t *testing.T) {
	stub := func(s nomadapi.TaskGroupSummary) *nomadapi.JobListStub {
		return &nomadapi.JobListStub{Status: "pending", JobSummary: &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"g": s}}}
	}
	if !blocked(stub(nomadapi.TaskGroupSummary{Queued: 2})) {
		t.Fatal("queued with nothing placed is blocked")
	}
	if blocked(stub(nomadapi.TaskGroupSummary{Queued: 1, Running: 1})) {
		t.Fatal("partly placed must not escalate: a new version would restart the running allocation")
	}
	if blocked(stub(nomadapi.TaskGroupSummary{})) {
		t.Fatal("nothing queued is not blocked")
	}
	stopped := stub(nomadapi.TaskGroupSummary{Queued: 1})
	stopped.Stop = true
	if blocked(stopped) {
		t.Fatal("a stopped job is not blocked")
	}
}

func TestParseStepRoundTrips(t *testing.T) {
	for st := escalation.Chosen; st <= escalation.AnyNode; st++ {
		if parseStep(st.String()) != st {
			t.Fatalf("%s", st)
		}
	}
	if parseStep("") != escalation.Chosen {
		t.Fatal("no step recorded is the chosen classes")
	}
}
