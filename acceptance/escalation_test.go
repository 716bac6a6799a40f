//go:build acceptance

package acceptance

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/synth"
)

// TestFailingNodeIsGreylistedAndAvoided (placement-escalation.txt, node
// reliability tracking): harvested tasks fail on one node; after three
// failures the placer greylists it, and harvested jobs then avoid it — one
// pinned to it waits, one free to go anywhere runs elsewhere.
func TestFailingNodeIsGreylistedAndAvoided(t *testing.T) {
	placerURL, proxyAddr := policyPlacer(t, "harvest-greylist/", "", `
greylist {
  enabled   = true
  interval  = "1s"
  threshold = 3
  reset     = "1h"
}`)
	bad := cluster.NomadClients[2].Name
	pin := fmt.Sprintf("constraint {\n    attribute = \"${node.unique.name}\"\n    value     = %q\n  }", bad)
	failing := uniqueName("acc-fail")
	purgeJob(t, failing)
	runVia(t, proxyAddr, policyJob(t, failing, 3, 32, "exit 1", "", pin))
	var report api.GreylistReport
	for deadline := time.Now().Add(60 * time.Second); !slices.Contains(report.Greylisted, bad); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not greylisted after three failures: %+v", bad, report)
		}
		report = mustRead(t, placerAPI(placerURL).Greylist)
	}
	if report.Failures[bad] < 3 || len(report.Greylisted) != 1 {
		t.Fatalf("greylist report %+v", report)
	}
	waitNodeMeta(t, bad, "harvest_greylisted", "true", 15*time.Second)

	pinned := uniqueName("acc-pinned")
	purgeJob(t, pinned)
	runVia(t, proxyAddr, policyJob(t, pinned, 1, 32, "sleep 60", "", pin))
	free := uniqueName("acc-free")
	purgeJob(t, free)
	runVia(t, proxyAddr, policyJob(t, free, 4, 32, "sleep 60", "", ""))
	for _, a := range waitAllocs(t, free, 4, 2*time.Minute, isRunning) {
		if a.NodeName == bad {
			t.Errorf("a harvested task was placed on the greylisted %s", bad)
		}
	}
	// the scheduler has evaluated the pinned job: it is queued, not placed
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		sum, _, err := nomadClient(t).Jobs().Summary(pinned, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Summary["work"].Queued == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pinned job was never evaluated as queued: %+v", sum.Summary)
		}
	}
	allocs, _, err := nomadClient(t).Jobs().Allocations(pinned, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 0 {
		t.Fatalf("the job pinned to greylisted %s was placed: %d allocations", bad, len(allocs))
	}
	job, _, err := nomadClient(t).Jobs().Info(pinned, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hasConstraint(job, "${meta.harvest_greylisted}", "!=", "true") {
		t.Fatalf("constraints %v", job.Constraints)
	}
}

// TestBlockedJobEscalatesToMoreClassesAndRuns (placement-escalation.txt,
// placement escalation): Algorithm 1 may pick only the constant class (the
// weights say so); its two nodes are full; the harvested job waits, and
// after its own 5 s delay the placer widens it to the next class by
// weighted room, where it runs. The step is in the job's meta.
func TestBlockedJobEscalatesToMoreClassesAndRuns(t *testing.T) {
	proxyAddr, constant, periodic := escalationClasses(t, "harvest-escalation/")
	n := cluster.NomadClients
	for _, node := range []string{n[0].Name, n[1].Name} {
		fillMemory(t, node)
	}

	job := uniqueName("acc-escalate")
	purgeJob(t, job)
	runVia(t, proxyAddr, policyJob(t, job, 1, 100, "sleep 60", `harvest_escalate_after = "5s"`, ""))
	allocs := waitAllocs(t, job, 1, 2*time.Minute, isRunning)
	registered, _, err := nomadClient(t).Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta := registered.Meta
	t.Logf("job meta after escalation: %v; runs on %s%s", meta, allocs[0].NodeName, scores(t, allocs[0].ID))
	if meta["harvest_escalation"] != "more-classes" || meta["harvest_blocked_since"] == "" ||
		!strings.HasPrefix(meta["harvest_reason"], "escalated to more-classes") {
		t.Fatalf("job meta %v", meta)
	}
	if !hasConstraint(registered, "${meta.harvest_class}", "set_contains_any", periodic) ||
		!hasConstraint(registered, "${meta.harvest_class}", "set_contains_any", constant) {
		t.Fatalf("constraints %v: want %s and %s", registered.Constraints, constant, periodic)
	}
	if allocs[0].NodeName != n[2].Name {
		t.Fatalf("the escalated job runs on %s, want %s (class %s)", allocs[0].NodeName, n[2].Name, periodic)
	}
	if *registered.Version < 1 {
		t.Fatalf("version %d: the escalation must be a new version of the job", *registered.Version)
	}
}

// fillMemory runs a raw_exec job pinned to node that asks for all the
// memory Nomad has left there but 50 MB, until cleanup.
func fillMemory(t *testing.T, node string) { fillMemoryLeaving(t, node, 50) }

// fillMemoryLeaving is fillMemory leaving leaveMB.
func fillMemoryLeaving(t *testing.T, node string, leaveMB int64) {
	t.Helper()
	c := nomadClient(t)
	id := nodeID(t, node)
	info, _, err := c.Nodes().Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	free := info.NodeResources.Memory.MemoryMB
	if info.ReservedResources != nil {
		free -= int64(info.ReservedResources.Memory.MemoryMB)
	}
	allocs, _, err := c.Nodes().Allocations(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range allocs {
		// what the scheduler counts: allocations meant to run (those of jobs
		// an earlier test purged are stopping and about to free their memory)
		if a.DesiredStatus == nomadapi.AllocDesiredStatusRun && !a.ClientTerminalStatus() {
			for _, tr := range a.AllocatedResources.Tasks {
				free -= tr.Memory.MemoryMB
			}
		}
	}
	t.Logf("filling %s: %d MB of %d MB free to Nomad", node, free-leaveMB, free)
	job := uniqueName("acc-fill")
	purgeJob(t, job)
	nomadCLI(t, "job", "run", "-detach", writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  constraint {
    attribute = "${node.unique.name}"
    value     = %q
  }
  group "fill" {
    task "fill" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = %d
      }
    }
  }
}`, job, node, free-leaveMB)))
	waitAllocs(t, job, 1, time.Minute, isRunning)
}

// escalationClasses starts a placer under prefix that escalates and whose
// weights let Algorithm 1 pick only the constant class, with the first two
// clients classed constant and the third periodic (the rest unclassified),
// and returns its proxy's address and the two classes.
func escalationClasses(t *testing.T, prefix string) (proxyAddr, constant, periodic string) {
	t.Helper()
	now := time.Now().UTC().Truncate(history.Slot)
	start := now.Add(-10 * 24 * time.Hour)
	importHistory(t, prefix, map[history.TenantID]history.Series{
		tenantOf(t, 0): flatSeries(20, start, 10, 1),
		tenantOf(t, 1): flatSeries(22, start, 10, 2),
		tenantOf(t, 2): synth.PatternSeries(3, synth.Periodic, start, 10),
	})
	api, addr, stop := startPlacerWith(t, prefix,
		`weights = { medium = { constant = 1, periodic = 0, unpredictable = 0 } }`, `
escalation {
  enabled  = true
  interval = "1s"
  delay    = "1h"
}`)
	t.Cleanup(stop)
	n := cluster.NomadClients
	labels := refreshAndWaitForLabels(t, api, func(l map[string][2]string) bool {
		// the other nodes too: a class label an earlier test left on one of
		// them (seen: constant-1 on client-4) would take the job before the
		// refresh's "unclassified" reaches Nomad's server
		for _, c := range n[3:] {
			if l[c.Name][0] != "unclassified" {
				return false
			}
		}
		return l[n[0].Name][1] == "constant" && l[n[1].Name] == l[n[0].Name] && l[n[2].Name][1] == "periodic"
	})
	constant, periodic = labels[n[0].Name][0], labels[n[2].Name][0]
	if labels[n[1].Name][0] != constant || labels[n[0].Name][1] != "constant" || labels[n[2].Name][1] != "periodic" {
		t.Fatalf("labels %v", labels)
	}
	return addr, constant, periodic
}
