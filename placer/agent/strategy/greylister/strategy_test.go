package greylister

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/greylist"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// A unit test of the pass against the fake Nomad (nomadtest.ScaleNomad),
// read directly (no watch): what the pass writes into node meta for a
// given cluster.

// Greylist: three failures of its own greylist node-0000; three evictions
// by the driver's reserve on node-0001 and two failures on node-0002 do
// not. When the counters reset the mark comes off.
func TestGreylistPassCountsOnlyTheNodesFaults(t *testing.T) {
	fake := nomadtest.NewScaleNomad(3, 1)
	view := cluster.New(fake.Serve(t))
	evicted := map[string]*nomadapi.TaskState{"t": {Events: []*nomadapi.TaskEvent{{Type: "Killing",
		DisplayMessage: contract.EvictionPrefix + " primary tenant needs 3 cores"}}}}
	for i, f := range []struct {
		node   string
		states map[string]*nomadapi.TaskState
	}{{"node-0000", nil}, {"node-0000", nil}, {"node-0000", nil},
		{"node-0001", evicted}, {"node-0001", evicted}, {"node-0001", evicted},
		{"node-0002", nil}, {"node-0002", nil}} {
		fake.AddAlloc(&nomadapi.AllocationListStub{ID: "failed-" + string(rune('a'+i)), JobID: "etl-000", TaskGroup: "a",
			NodeID: f.node, ClientStatus: "failed", DesiredStatus: "run", TaskStates: f.states})
	}
	now := time.Now()
	g := &Strategy{view: view, tracker: greylist.NewTracker(3, time.Hour, now), reset: time.Hour, log: hclog.NewNullLogger(),
		metrics: NewMetrics(prometheus.NewRegistry()), now: func() time.Time { return now }, seen: map[string]bool{}}
	if err := g.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{"node-0000": "true", "node-0001": "", "node-0002": ""} {
		if got := fake.Meta(node, proxy.GreylistKey); got != want {
			t.Errorf("%s: greylisted %q, want %q", node, got, want)
		}
	}
	now = now.Add(61 * time.Minute) // the counters reset; the failures are older than the reset
	if err := g.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fake.Meta("node-0000", proxy.GreylistKey); got != "" {
		t.Errorf("after the reset node-0000 is still greylisted (%q)", got)
	}
}

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
