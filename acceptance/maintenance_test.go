//go:build acceptance

package acceptance

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// maintenancePlan runs `harvestctl maintenance plan` against the cluster and
// returns its output and exit code (3, wait, is not a failure).
func maintenancePlan(t *testing.T, args ...string) (string, int) {
	t.Helper()
	args = append([]string{"maintenance", "plan", "-nomad-addr", cluster.NomadAddr()}, args...)
	out, err := exec.Command(filepath.Join(bin, "harvestctl"), args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("harvestctl %s: %v\n%s", strings.Join(args, " "), err, out)
	return "", 0
}

// TestMaintenancePlanWaitsWhileHeavyWorkRunsThenDrains, on the real
// cluster: three short batch jobs that prefer client-3 run there and finish
// (the profile's history); a long one pinned to client-3 runs. With urgency
// 1 the threshold is the profile's quietest moment, never above what ran
// just before now, and a running job's accumulated work only grows: plan
// -once says wait (exit 3). A plan that watches (no -once) says wait on its
// first decision and again on its next read of the live allocations; once
// the heavy job is stopped nothing runs: it says start now, and with -drain
// -node client-3 the node drains and turns ineligible, so the same kind of
// job submitted afterwards, which prefers client-3, lands on another node.
func TestMaintenancePlanWaitsWhileHeavyWorkRunsThenDrains(t *testing.T) {
	const node = "client-3"
	begin := time.Now()
	c := nomadClient(t)
	id := nodeID(t, node)
	mhz := mhzFor(t, node, 0.25)
	prefer := fmt.Sprintf("affinity {\n    attribute = \"${node.unique.name}\"\n    value     = %q\n    weight    = 100\n  }", node)
	pin := fmt.Sprintf("constraint {\n    attribute = \"${node.unique.name}\"\n    value     = %q\n  }", node)

	var short []string
	for i := 0; i < 3; i++ {
		job := uniqueName(fmt.Sprintf("acc-maint-short%d", i))
		purgeJob(t, job)
		nomadCLI(t, "job", "run", "-detach", harvestJob(t, job, 1, mhz, 3, prefer))
		short = append(short, job)
	}
	for _, job := range short {
		for _, a := range waitAllocs(t, job, 1, 2*time.Minute, complete) {
			if a.NodeName != node {
				t.Fatalf("short job %s, which prefers %s, ran on %s", job, node, a.NodeName)
			}
		}
	}
	heavy := uniqueName("acc-maint-heavy")
	purgeJob(t, heavy)
	nomadCLI(t, "job", "run", "-detach", harvestJob(t, heavy, 1, 2*mhz, 600, pin))
	waitAllocs(t, heavy, 1, time.Minute, func(a *nomadapi.AllocationListStub) bool {
		return a.ClientStatus == nomadapi.AllocClientStatusRunning && a.NodeName == node
	})
	time.Sleep(3 * time.Second) // some work to forfeit

	// the profile from 10 s before the first job on, every second
	profile := func() []string {
		window := (time.Since(begin) + 10*time.Second).Round(time.Second)
		return []string{"-urgency", "1", "-deadline", "1h", "-profile-window", window.String(), "-step", "1s"}
	}
	out, code := maintenancePlan(t, append(profile(), "-once")...)
	t.Logf("harvestctl maintenance plan -once: exit %d\n%s", code, out)
	if code != 3 || !strings.Contains(out, "wait: workload") || !strings.Contains(out, "by running jobs (cl, for comparison)") {
		t.Fatalf("with the heavy job running: exit %d, want 3 and wait", code)
	}

	t.Cleanup(func() { // the node takes work again
		if _, err := c.Nodes().UpdateDrainOpts(id, &nomadapi.DrainOptions{MarkEligible: true}, nil); err != nil {
			t.Errorf("cancel the drain of %s: %v", node, err)
		}
		if _, err := c.Nodes().ToggleEligibility(id, true, nil); err != nil {
			t.Errorf("make %s eligible again: %v", node, err)
		}
	})
	logPath := filepath.Join(t.TempDir(), "plan.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	output := func() string {
		b, _ := os.ReadFile(logPath)
		return string(b)
	}
	args := append([]string{"maintenance", "plan", "-nomad-addr", cluster.NomadAddr()}, profile()...)
	watch := exec.Command(filepath.Join(bin, "harvestctl"), append(args, "-interval", "1s", "-drain", "-node", node, "-drain-deadline", "1m")...)
	watch.Stdout, watch.Stderr = logf, logf
	watch.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	var watchErr error
	exited := make(chan struct{})
	go func() {
		watchErr = watch.Wait()
		logf.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = watch.Process.Kill()
		<-exited
	})
	for until := time.Now().Add(time.Minute); strings.Count(output(), "  wait\n") < 2; {
		select {
		case <-exited:
			t.Fatalf("the watching plan ended (%v) while the heavy job ran:\n%s", watchErr, output())
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(until) {
			t.Fatalf("the watching plan did not say wait twice within a minute:\n%s", output())
		}
	}

	nomadCLI(t, "job", "stop", heavy)
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the watching plan did not start within 2 minutes of the heavy job's stop:\n%s", output())
	}
	out = output()
	t.Logf("harvestctl %s: %v\n%s", strings.Join(watch.Args[1:], " "), watchErr, out)
	if watchErr != nil || !strings.Contains(out, "start now: workload 0 is at or below") ||
		!strings.Contains(out, "node "+node+" ("+id[:8]+"): draining") {
		t.Fatalf("with the heavy job stopped: %v, want exit 0, start now and the drain of %s", watchErr, node)
	}
	n, _, err := c.Nodes().Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.SchedulingEligibility != nomadapi.NodeSchedulingIneligible || (n.DrainStrategy == nil && n.LastDrain == nil) {
		t.Fatalf("%s after the plan: eligibility %s, drain %+v, last drain %+v", node, n.SchedulingEligibility, n.DrainStrategy, n.LastDrain)
	}

	after := uniqueName("acc-maint-after")
	purgeJob(t, after)
	nomadCLI(t, "job", "run", "-detach", harvestJob(t, after, 1, mhz, 1, prefer))
	for _, a := range waitAllocs(t, after, 1, 2*time.Minute, complete) {
		if a.NodeName == node {
			t.Fatalf("a job submitted after the drain ran on the drained node %s", node)
		}
		t.Logf("a job preferring %s, submitted after its drain, ran on %s", node, a.NodeName)
	}
}
