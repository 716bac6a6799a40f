//go:build acceptance

package acceptance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

// nomadVia runs the nomad CLI with NOMAD_ADDR at addr (the proxy); in a
// secure run as a user who may submit jobs and nothing of Harvest's.
func nomadVia(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(stack, "nomad"), args...)
	cmd.Env = append(append(os.Environ(), "NOMAD_ADDR="+harvestScheme()+"://"+addr), nomadEnv(tokens.submitter)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// dagJob is the shipped example DAG job (jobs/examples/harvest-dag.nomad.hcl)
// under another name, so the tests also prove the example works.
func dagJob(t *testing.T, name string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "jobs", "examples", "harvest-dag.nomad.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(string(src), `job "harvest-dag" {`, fmt.Sprintf("job %q {", name), 1)
	if out == string(src) {
		t.Fatal("the example job's header changed: update dagJob")
	}
	return out
}

// TestProxyRunsAHarvestedDAGJobStageByStage submits a three-stage harvested
// DAG job with `nomad job run` through the placer's admission proxy, and
// checks the rewrite (class constraint, explanation in meta), placement on
// the chosen classes' nodes only, stages in order, the recorded duration
// typing the next run, and that other requests pass through unchanged.
func TestProxyRunsAHarvestedDAGJobStageByStage(t *testing.T) {
	labels, _, proxyAddr := labelNodes(t)
	job := uniqueName("acc-dag")
	purgeJob(t, job) // its stage jobs ("<job>.transform", "<job>.load") go with it
	path := writeJob(t, dagJob(t, job))

	if out, err := nomadVia(t, proxyAddr, "job", "plan", path); err != nil && !strings.Contains(out, "Job Modify Index") {
		t.Fatalf("nomad job plan through the proxy: %v\n%s", err, out)
	}
	if out, err := nomadVia(t, proxyAddr, "job", "run", "-detach", path); err != nil {
		t.Fatalf("nomad job run through the proxy: %v\n%s", err, out)
	}
	registered, _, err := nomadClient(t).Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta := registered.Meta
	classes := strings.Split(meta["harvest_classes"], ",")
	if meta["harvest_job_type"] != "medium" || meta["harvest_reason"] == "" || meta["harvest_classes"] == "" {
		t.Fatalf("job meta %v", meta)
	}
	var constraint *nomadapi.Constraint
	for _, c := range registered.Constraints {
		if c.LTarget == "${meta.harvest_class}" {
			constraint = c
		}
	}
	if constraint == nil || constraint.RTarget != meta["harvest_classes"] {
		t.Fatalf("class constraint %+v (classes %s)", constraint, meta["harvest_classes"])
	}
	// harvestctl explains the admission from the decision the proxy kept
	why := harvestctlOnCluster(t, "explain", "job", job)
	for _, want := range []string{"Admitted ", "Type: medium", "Algorithm 1: fit ", "classes [" + strings.Join(classes, " ") + "]",
		"WEIGHTED ROOM", "constraint ${meta.harvest_class}"} {
		if !strings.Contains(why, want) {
			t.Errorf("harvestctl explain job lacks %q:\n%s", want, why)
		}
	}
	t.Logf("placed on %v: %s", classes, meta["harvest_reason"])

	// The run is over when the placer records it: stage jobs included.
	store := history.NewStore(kv.NewConsul(consulAPI(t, cluster.ConsulAddr())), "")
	var run history.JobRun
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		var ok bool
		if run, ok, err = store.LastJobRun(context.Background(), "default", job); err != nil {
			t.Fatal(err)
		} else if ok {
			break
		}
	}
	if run.Duration <= 0 || run.Status != "complete" {
		t.Fatalf("job run not recorded as complete: %+v", run)
	}
	allocs := allocations(t, job)
	for _, stage := range []string{"transform", "load"} {
		allocs = append(allocs, allocations(t, job+"."+stage)...)
	}
	finished := map[string]time.Time{}
	started := map[string]time.Time{}
	completed := map[string]int{}
	for _, a := range allocs {
		if !slices.Contains(classes, labels[a.NodeName][0]) {
			t.Errorf("allocation on %s (class %s), outside %v", a.NodeName, labels[a.NodeName][0], classes)
		}
		st := a.TaskStates["t"]
		if a.ClientStatus != "complete" || st == nil {
			continue
		}
		completed[a.TaskGroup]++
		if f := finished[a.TaskGroup]; st.FinishedAt.After(f) {
			finished[a.TaskGroup] = st.FinishedAt
		}
		if s, ok := started[a.TaskGroup]; !ok || st.StartedAt.Before(s) {
			started[a.TaskGroup] = st.StartedAt
		}
	}
	if completed["extract"] != 2 || completed["transform"] != 2 || completed["load"] != 1 {
		t.Fatalf("completed per stage %v", completed)
	}
	if !started["transform"].After(finished["extract"]) || !started["load"].After(finished["transform"]) {
		t.Fatalf("stages overlapped: %v / %v", started, finished)
	}

	// The recorded duration types the next run.
	if out, err := nomadVia(t, proxyAddr, "job", "run", "-detach", path); err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	again, _, err := nomadClient(t).Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Meta["harvest_job_type"] != "short" {
		t.Fatalf("after a %s run the job is typed %q, want short", run.Duration, again.Meta["harvest_job_type"])
	}

	// A cycle is refused through the proxy as Nomad refuses a bad job, naming the group.
	cyclic := writeJob(t, strings.Replace(dagJob(t, uniqueName("acc-cycle")),
		`harvest_after = "extract"`, `harvest_after = "extract,load"`, 1))
	if out, err := nomadVia(t, proxyAddr, "job", "run", "-detach", cyclic); err == nil ||
		!strings.Contains(out, `task group \"load\": is in a cycle`) && !strings.Contains(out, `task group "load": is in a cycle`) {
		t.Fatalf("a cyclic DAG through the proxy: %v\n%s", err, out)
	}
	if out := harvestCLI(t, "harvestctl", "dag", "estimate", path); !strings.Contains(out, "peak concurrent: 2 tasks, 200 MHz, 64 MB") {
		t.Fatalf("harvestctl dag estimate:\n%s", out)
	}

	// A non-harvested job passes unchanged; status and logs work through the proxy.
	plain := uniqueName("acc-plain")
	purgeJob(t, plain)
	plainPath := writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "for i in 1 2 3; do echo line-$i; sleep 1; done"]
      }
    }
  }
}`, plain))
	if out, err := nomadVia(t, proxyAddr, "job", "run", "-detach", plainPath); err != nil {
		t.Fatalf("plain job through the proxy: %v\n%s", err, out)
	}
	pj, _, err := nomadClient(t).Jobs().Info(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pj.Constraints) != 0 || pj.Meta["harvest_classes"] != "" {
		t.Fatalf("a non-harvested job was rewritten: %+v %v", pj.Constraints, pj.Meta)
	}
	a := waitAllocs(t, plain, 1, time.Minute, func(a *nomadapi.AllocationListStub) bool { return a.ClientStatus != "pending" })[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(stack, "nomad"), "alloc", "logs", "-f", a.ID, "t")
	cmd.Env = append(append(os.Environ(), "NOMAD_ADDR="+harvestScheme()+"://"+proxyAddr), nomadEnv(tokens.submitter)...)
	out, _ := cmd.CombinedOutput() // -f ends when the task does, or at the timeout
	if !strings.Contains(string(out), "line-3") {
		t.Fatalf("nomad alloc logs -f through the proxy: %q", out)
	}
	if out, err := nomadVia(t, proxyAddr, "status"); err != nil || !strings.Contains(out, plain) {
		t.Fatalf("nomad status through the proxy: %v\n%s", err, out)
	}
}
