package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/internal/syncbuf"
	"github.com/harvest-platform/harvest/placer/maintenance/nomadcluster"
)

var planNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// newFakeNomad is the shared fake Nomad with three nodes (client-1..3)
// whose n-th allocation listing is allocs(n) (nil: the listing fails), as
// Nomad evaluates the one filter `maintenance plan` sends.
func newFakeNomad(t *testing.T, allocs func(listing int) []*nomadapi.AllocationListStub) (*nomadtest.ScaleNomad, string) {
	f := nomadtest.NewScaleNomad(3, 0)
	for i, n := range f.Nodes {
		n.ID, n.Name = strings.Repeat(string(rune('a'+i)), 8)+"-0000-0000-0000-000000000000", fmt.Sprintf("client-%d", i+1)
	}
	f.AllocListing = func(n int) ([]*nomadapi.AllocationListStub, error) {
		if all := allocs(n); all != nil {
			return all, nil
		}
		return nil, errors.New("fake nomad: no leader")
	}
	f.Filters = map[string]func(*nomadapi.AllocationListStub) bool{nomadcluster.LiveAllocs: func(a *nomadapi.AllocationListStub) bool {
		return a.ClientStatus != nomadapi.AllocClientStatusComplete && a.ClientStatus != nomadapi.AllocClientStatusFailed &&
			a.ClientStatus != nomadapi.AllocClientStatusLost
	}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// eligibility is each node's scheduling eligibility in the fake.
func eligibility(f *nomadtest.ScaleNomad) map[string]string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := map[string]string{}
	for _, n := range f.Nodes {
		out[n.ID] = n.SchedulingEligibility
	}
	return out
}

// A known day: a light job (100 MHz) from -10m to -6m, a heavy one (1000
// MHz) from -5m on. Sampled every minute over the last 10 minutes, AW is
// 0 6000 12000 18000 0 | 0 60000 120000 180000 240000 (MHz·s) and CL is
// 1 1 1 1 0 1 1 1 1 1.
func heavyRunning(int) []*nomadapi.AllocationListStub {
	return []*nomadapi.AllocationListStub{
		nomadtest.BatchTask("light", 100, planNow.Add(-10*time.Minute), planNow.Add(-6*time.Minute)),
		nomadtest.BatchTask("heavy", 1000, planNow.Add(-5*time.Minute), time.Time{}),
		{ID: "svc", JobID: "web", JobType: nomadapi.JobTypeService, ClientStatus: nomadapi.AllocClientStatusRunning,
			TaskStates: map[string]*nomadapi.TaskState{"web": {State: "running", StartedAt: planNow.Add(-time.Hour)}}},
	}
}

func runPlan(t *testing.T, addr string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &planCommand{out: &out, errOut: &errOut, now: func() time.Time { return planNow }}
	code := c.Run(append([]string{"-nomad-addr", addr, "-profile-window", "10m", "-step", "1m", "-interval", "1ms"}, args...))
	return code, out.String(), errOut.String()
}

// TestPlanThresholdFromAKnownProfileAndTheTwoRules: urgency 40 takes the
// 40th percentile, AW 12000 and CL 1. The heavy job's 300000 MHz·s now is
// far above AW's threshold: wait (exit 3). By CL one running job is as
// quiet as usual: start now, forfeiting the heavy job's five minutes.
func TestPlanThresholdFromAKnownProfileAndTheTwoRules(t *testing.T) {
	f, addr := newFakeNomad(t, heavyRunning)
	code, out, errOut := runPlan(t, addr, "-urgency", "40", "-deadline", "2h", "-once")
	if code != planWait {
		t.Fatalf("exit %d, want %d (wait)\n%s%s", code, planWait, out, errOut)
	}
	for _, want := range []string{
		"10 samples): 2 task runs of 2 jobs",
		"by accumulated work (aw, chosen), start when it is at or below 12000 MHz·s",
		"by running jobs (cl, for comparison), start when it is at or below 1 jobs",
		"aw 300000 MHz·s, threshold 12000  deadline in 2h0m0s  wait",
		"wait: workload 300000 above the threshold 12000 (exit 3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if q := f.AllocQueries[0]; q.Get("namespace") != "*" || q.Get("resources") != "true" || q.Has("filter") {
		t.Errorf("allocations listed with %v, want every namespace's allocations with resources", q)
	}
	if len(f.AllocQueries) != 1 {
		t.Errorf("-once listed allocations %d times, want once: it decides on the profile's read", len(f.AllocQueries))
	}

	code, out, _ = runPlan(t, addr, "-urgency", "40", "-deadline", "2h", "-once", "-rule", "cl")
	if code != planStartNow || !strings.Contains(out, "cl 1 jobs, threshold 1") || !strings.Contains(out, "start now: workload 1 is at or below the threshold 1") {
		t.Fatalf("cl: exit %d\n%s", code, out)
	}
	if len(f.Drains) != 0 {
		t.Fatalf("drained without -drain: %+v", f.Drains)
	}
}

// TestPlanWatchesUntilTheHeavyJobEndsThenDrainsTheNamedNode: the first
// decision, on the profile's read, waits; the next read fails and is tried
// again; by the third the heavy job has finished; it says start now and
// drains client-2 only, with the drain deadline, leaving it ineligible. The
// watch asks Nomad only for the allocations that have not ended.
func TestPlanWatchesUntilTheHeavyJobEndsThenDrainsTheNamedNode(t *testing.T) {
	f, addr := newFakeNomad(t, func(listing int) []*nomadapi.AllocationListStub {
		allocs := heavyRunning(listing)
		switch {
		case listing == 2:
			return nil
		case listing >= 3:
			allocs[1] = nomadtest.BatchTask("heavy", 1000, planNow.Add(-5*time.Minute), planNow.Add(-time.Second))
		}
		return allocs
	})
	code, out, errOut := runPlan(t, addr, "-urgency", "40", "-deadline", "2h", "-drain", "-node", "client-2", "-drain-deadline", "15m")
	if code != planStartNow {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "(fake nomad: no leader) (trying again in 1ms)") {
		t.Errorf("stderr %q lacks the failed read being tried again", errOut)
	}
	var filters []string
	for _, q := range f.AllocQueries {
		filters = append(filters, q.Get("filter"))
	}
	if want := []string{"", nomadcluster.LiveAllocs, nomadcluster.LiveAllocs}; !slices.Equal(filters, want) {
		t.Errorf("allocations listed with filters %q, want %q: every allocation for the profile, then unfinished ones", filters, want)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"aw 300000 MHz·s, threshold 12000  deadline in 2h0m0s  wait", "aw 0 MHz·s, threshold 12000  deadline in 2h0m0s  start now",
		"start now: workload 0 is at or below the threshold 12000", "node client-2 (bbbbbbbb): draining, its allocations have 15m0s to move"}
	if len(lines) < len(want) {
		t.Fatalf("output:\n%s", out)
	}
	for i, w := range want {
		if got := lines[len(lines)-len(want)+i]; !strings.Contains(got, w) {
			t.Errorf("line %q lacks %q", got, w)
		}
	}
	if len(f.Drains) != 1 || f.Drains[0].NodeID != f.Nodes[1].ID || f.Drains[0].DrainSpec == nil || f.Drains[0].DrainSpec.Deadline != 15*time.Minute {
		t.Fatalf("drain requests %+v, want client-2 with a 15m deadline", f.Drains)
	}
	if eligibility(f)[f.Nodes[1].ID] != nomadapi.NodeSchedulingIneligible || eligibility(f)[f.Nodes[0].ID] != nomadapi.NodeSchedulingEligible {
		t.Fatalf("eligibility %v", eligibility(f))
	}
}

// TestPlanDeadlineForcesTheStartAndDrainsEveryNode: with the deadline come,
// it starts although the heavy job runs; without -node it drains all,
// making every node ineligible before the first drain so that nothing
// drained off one lands on another.
func TestPlanDeadlineForcesTheStartAndDrainsEveryNode(t *testing.T) {
	f, addr := newFakeNomad(t, heavyRunning)
	code, out, _ := runPlan(t, addr, "-urgency", "40", "-deadline", planNow.Add(-time.Minute).Format(time.RFC3339), "-once", "-drain")
	if code != planStartNow || !strings.Contains(out, "deadline passed  start now") || !strings.Contains(out, "start now: the deadline 2026-11-20T11:59:00Z has come (workload 300000 above 12000)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var want []string
	for _, verb := range []string{"eligibility", "drain"} {
		for _, n := range f.Nodes {
			want = append(want, verb+" "+n.ID)
		}
	}
	if !slices.Equal(f.NodeWrites, want) {
		t.Fatalf("node writes %q, want %q", f.NodeWrites, want)
	}
	for id, e := range eligibility(f) {
		if e != nomadapi.NodeSchedulingIneligible {
			t.Errorf("node %s left %s", id, e)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	_, addr := newFakeNomad(t, func(int) []*nomadapi.AllocationListStub {
		return []*nomadapi.AllocationListStub{nomadtest.BatchTask("old", 100, planNow.Add(-3*time.Hour), planNow.Add(-2*time.Hour))}
	})
	_, heavyAddr := newFakeNomad(t, heavyRunning)
	cases := []struct {
		addr string
		args []string
		want string
	}{
		{addr, []string{"-urgency", "10", "-deadline", "1h"}, "nothing ran in the last 10m0s"},
		{"http://127.0.0.1:1", []string{"-urgency", "10", "-deadline", "1h"}, "cannot reach Nomad at http://127.0.0.1:1"},
		{heavyAddr, []string{"-deadline", "1h"}, "-urgency is required"},
		{heavyAddr, []string{"-urgency", "101", "-deadline", "1h"}, "urgency 101: want 1"},
		{heavyAddr, []string{"-urgency", "10", "-deadline", "tomorrow"}, `-deadline "tomorrow": want a duration`},
		{heavyAddr, []string{"-urgency", "10", "-deadline", "1h", "-rule", "jobs"}, `-rule "jobs"`},
		{heavyAddr, []string{"-urgency", "10", "-deadline", "1h", "-node", "client-1"}, "add -drain"},
		{heavyAddr, []string{"-urgency", "10", "-deadline", "1h", "-drain", "-node", "client-9"}, "-node client-9: no such Nomad node (nodes: client-1, client-2, client-3)"},
		{heavyAddr, []string{"-urgency", "10", "-deadline", "1h", "-step", "1s", "-profile-window", "720h"}, "over a million samples"},
	}
	for _, tc := range cases {
		code, out, errOut := runPlan(t, tc.addr, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q (stdout %q)", tc.args, code, errOut, tc.want, out)
		}
	}
}

// TestPlanInterruptedWhileWaiting: SIGINT while it watches ends it with 130,
// saying nothing was drained.
func TestPlanInterruptedWhileWaiting(t *testing.T) {
	f, addr := newFakeNomad(t, heavyRunning)
	var out, errOut syncbuf.Buffer
	c := &planCommand{out: &out, errOut: &errOut, now: func() time.Time { return planNow }}
	done := make(chan int)
	go func() {
		done <- c.Run([]string{"-nomad-addr", addr, "-profile-window", "10m", "-step", "1m", "-interval", "50ms",
			"-urgency", "40", "-deadline", "2h", "-drain"})
	}()
	for !strings.Contains(out.String(), "  wait") { // the signal handler is in place by the first tick
		time.Sleep(5 * time.Millisecond)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != planInterrupted || !strings.Contains(out.String(), "interrupted: maintenance not started, nothing drained") {
			t.Fatalf("exit %d\n%s", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after SIGINT")
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if len(f.Drains) != 0 {
		t.Fatalf("drained after the interrupt: %+v", f.Drains)
	}
}
