package testbed

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/jobspec2"

	"github.com/harvest-platform/harvest/internal/replay"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// A task on the real primary's node burns a NodeCores-th of a core pinned
// to its CPU for its length; on any other node it sleeps. Nomad fills in
// ${node.unique.name} before the task starts, as this test does.
func TestTasksOnTheRealPrimarysNodeBurnTheirShare(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	tool := filepath.Join(dir, "harvest-dev")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho \"$@\" >> "+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	j := &job{ID: "tb-h-1-00002", StreamJob: schedsim.StreamJob{Stages: [][]float64{{0.6, 1.2}}}}
	for _, reads := range []bool{false, true} {
		spec := jobSpec{Policy: H, MHzPerCore: 2500, Speedup: 12, Burn: &taskBurn{Node: "client-1", CPU: 0, Share: 1.0 / 12, Tool: tool}}
		if reads {
			spec.Reads = &taskReads{Endpoint: "http://127.0.0.1:1", AccessKey: "ak", SecretKey: "sk", Objects: 1}
		}
		parsed, err := jobspec2.ParseWithConfig(&jobspec2.ParseConfig{Path: "job.hcl", Body: []byte(jobHCL(j, spec)), Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		script := parsed.TaskGroups[0].Tasks[0].Config["args"].([]any)[1].(string)
		if !strings.Contains(script, `"${node.unique.name}" = "client-1"`) {
			t.Fatalf("script %q: want the node's name for Nomad to fill in", script)
		}
		for _, node := range []string{"client-2", "client-1"} {
			cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(script, "${node.unique.name}", node))
			cmd.Env = append(os.Environ(), "NOMAD_ALLOC_INDEX=1")
			if out, err := cmd.CombinedOutput(); err != nil && !reads {
				t.Fatalf("%s: %v: %s", node, err, out)
			}
		}
		got, err := os.ReadFile(calls)
		if err != nil || string(got) != "burn -share 0.0833 -seconds 0.10\n" {
			t.Fatalf("reads %v: the tool was called %q (%v): want one burn, on client-1 only, of allocation 1's length", reads, got, err)
		}
		_ = os.Remove(calls)
	}
}

// The stand-in's load is its tenant's share of its server on one CPU: a
// tenant at 50% of 12 cores asks half a CPU, 250 requests of 2 ms a second.
func TestTheRealPrimarysRateIsItsTenantsShare(t *testing.T) {
	tr, err := replay.Read(strings.NewReader("tenant,timestamp,cpu_percent\na/b,2030-01-01T00:00:00Z,50\na/b,2030-01-01T00:02:00Z,25\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	tr.Start, tr.Began, tr.Speedup = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), w, 12
	rate := rateAt(tr, "a/b", 12)
	if got := rate(w); got < 249.9 || got > 250.1 {
		t.Errorf("rate at 50%% = %v, want 250", got)
	}
	if got := rate(w.Add(10 * time.Second)); got < 124.9 || got > 125.1 { // 120 trace seconds later
		t.Errorf("rate at 25%% = %v, want 125", got)
	}
}

// No harvesting submits no job.
func TestNoneSubmitsNoJob(t *testing.T) {
	if p, err := ParsePolicy("none"); err != nil || p != None {
		t.Fatalf("none: %v %v", p, err)
	}
	c := Default()
	c.Policy, c.Out, c.RunDir, c.Bin, c.StackBin, c.Clients, c.TraceHours = None, "o", "r", "b", "s", 2, 1
	p, err := PlanOf(c)
	if err != nil || p.Jobs != 0 || p.JobScale <= 0 {
		t.Fatalf("plan %+v (%v): want no job and the stream's scale", p, err)
	}
}

// Under taskset -c 0 this process sees one CPU; the host's count is the
// kernel's online list, which the real primary's CPU is checked against.
func TestHostCPUsIsTheOnlineCount(t *testing.T) {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skip("no /sys/devices/system/cpu/online")
	}
	if n := hostCPUs(); n < 1 || (strings.TrimSpace(string(data)) == "0-1" && n != 2) {
		t.Fatalf("host CPUs %d for online %q", n, data)
	}
}

// A real-time load runs on every CPU but the real primary's, and only
// beside a real primary.
func TestTheRealtimeLoadKeepsOffThePrimarysCPU(t *testing.T) {
	if hostCPUs() < 2 {
		t.Skip("one CPU")
	}
	c := Default()
	c.RealPrimary, c.RealtimeLoad, c.RealPrimaryCPU = true, true, 1
	if got := c.loadCPUs(); strings.Contains(","+got+",", ",1,") || !strings.HasPrefix(got, "0") {
		t.Errorf("load CPUs %q beside the primary's CPU 1", got)
	}
	if err := c.Validate(); err != nil && strings.Contains(err.Error(), "real-time") {
		t.Errorf("a real-time load beside the real primary: %v", err)
	}
	c.RealPrimary = false
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "real-time load needs the real primary") {
		t.Errorf("a real-time load without the real primary: %v", err)
	}
}
