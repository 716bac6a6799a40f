//go:build acceptance

package acceptance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// TestEveryClientHasItsTenantMetaAndTheHarvestDriver checks what the harness
// promises of each node: its own static meta and the harvest plugin loaded.
func TestEveryClientHasItsTenantMetaAndTheHarvestDriver(t *testing.T) {
	c := nomadClient(t)
	if len(cluster.NomadClients) < 3 {
		t.Fatalf("cluster has %d clients, want at least 3", len(cluster.NomadClients))
	}
	tenants := map[string]bool{}
	for _, want := range cluster.NomadClients {
		node, _, err := c.Nodes().Info(nodeID(t, want.Name), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"harvest_tenant", "harvest_environment", "harvest_rack"} {
			if node.Meta[key] == "" || node.Meta[key] != want.Meta[key] {
				t.Errorf("%s: meta %s = %q, want %q", want.Name, key, node.Meta[key], want.Meta[key])
			}
		}
		tenants[node.Meta["harvest_tenant"]] = true
		d := node.Drivers["harvest"]
		if d == nil || !d.Detected || !d.Healthy {
			t.Errorf("%s: harvest driver not loaded from plugin_dir: %+v", want.Name, d)
		}
		if node.Attributes["unique.platform.aws.instance-id"] != "" {
			t.Errorf("%s: cloud fingerprinter ran", want.Name)
		}
	}
	if len(tenants) != len(cluster.NomadClients) {
		t.Errorf("clients share tenants: %v", tenants)
	}
}

// TestBatchJobRunsThroughNomadJobRunOnChosenClient submits HCL with the real
// CLI and checks where the task ran and what it printed.
func TestBatchJobRunsThroughNomadJobRunOnChosenClient(t *testing.T) {
	target := cluster.NomadClients[1].Name
	job := uniqueName("acc-batch")
	purgeJob(t, job)
	path := writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  constraint {
    attribute = "${node.unique.name}"
    value     = %q
  }
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "hello" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo ran-on-${node.unique.name} tenant=${meta.harvest_tenant}"]
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}`, job, target))
	out := nomadCLI(t, "job", "run", path)
	if !strings.Contains(out, "finished with status \"complete\"") {
		t.Fatalf("nomad job run did not report a complete evaluation:\n%s", out)
	}
	allocs := waitAllocs(t, job, 1, time.Minute, complete)
	if allocs[0].NodeName != target {
		t.Fatalf("task ran on %s, want %s", allocs[0].NodeName, target)
	}
	logs := nomadCLI(t, "alloc", "logs", allocs[0].ID, "hello")
	want := fmt.Sprintf("ran-on-%s tenant=%s", target, cluster.NomadClients[1].Meta["harvest_tenant"])
	if strings.TrimSpace(logs) != want {
		t.Fatalf("task printed %q, want %q", logs, want)
	}
}

// TestNodeMetaApplySteersClassConstrainedJob registers a job constrained on
// ${meta.harvest_class} before any node has that class (it must wait), then
// labels one node with `nomad node meta apply`: every allocation lands there.
func TestNodeMetaApplySteersClassConstrainedJob(t *testing.T) {
	target := cluster.NomadClients[2].Name
	id := nodeID(t, target)
	class := uniqueName("class")
	job := uniqueName("acc-classed")
	purgeJob(t, job)
	t.Cleanup(func() { nomadCLI(t, "node", "meta", "apply", "-node-id", id, "-unset", "harvest_class") })
	path := writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  constraint {
    attribute = "${meta.harvest_class}"
    value     = %q
  }
  group "g" {
    count = 3
    task "work" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}`, job, class))
	nomadCLI(t, "job", "run", "-detach", path)

	// The scheduler finds no node and queues the three allocations.
	c := nomadClient(t)
	var queued int
	for deadline := time.Now().Add(20 * time.Second); queued != 3 && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		summary, _, err := c.Jobs().Summary(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		queued = summary.Summary["g"].Queued
	}
	if queued != 3 {
		t.Fatalf("job should wait with 3 queued, has %d", queued)
	}
	if allocs, _, err := c.Jobs().Allocations(job, false, nil); err != nil || len(allocs) != 0 {
		t.Fatalf("job placed before any node has class %s: %d allocs (err %v)", class, len(allocs), err)
	}

	nomadCLI(t, "node", "meta", "apply", "-node-id", id, "harvest_class="+class)
	allocs := waitAllocs(t, job, 3, time.Minute, complete)
	for _, a := range allocs {
		if a.NodeName != target {
			t.Errorf("allocation %s landed on %s, want only %s", a.ID[:8], a.NodeName, target)
		}
	}
	node, _, err := c.Nodes().Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if node.Meta["harvest_class"] != class {
		t.Fatalf("node meta harvest_class = %q", node.Meta["harvest_class"])
	}
}

// TestEachClientKeepsItsServicesInItsOwnConsulAgent runs one service
// instance per client and checks all stay registered: clients sharing one
// Consul agent would deregister each other's. The job is left running on
// purpose: the teardown must stop its tasks.
func TestEachClientKeepsItsServicesInItsOwnConsulAgent(t *testing.T) {
	job := uniqueName("acc-svc")
	n := len(cluster.NomadClients)
	path := writeJob(t, fmt.Sprintf(`
job %q {
  type = "service"
  group "g" {
    count = %d
    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }
    service {
      name     = %q
      provider = "consul"
    }
    task "sleep" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo pid=$$; exec sleep 3600"]
      }
      resources {
        cpu    = 50
        memory = 16
      }
    }
  }
}`, job, n, job))
	nomadCLI(t, "job", "run", "-detach", path)
	allocs := waitAllocs(t, job, n, time.Minute, func(a *nomadapi.AllocationListStub) bool {
		return a.ClientStatus == nomadapi.AllocClientStatusRunning
	})
	for _, a := range allocs {
		var pid int
		logs := ""
		for i := 0; i < 40 && pid == 0; i++ {
			logs = nomadCLI(t, "alloc", "logs", a.ID, "sleep")
			fmt.Sscanf(strings.TrimSpace(logs), "pid=%d", &pid)
			time.Sleep(250 * time.Millisecond)
		}
		if pid == 0 || !processExists(pid) {
			t.Fatalf("task of %s not running (logs %q)", a.ID[:8], logs)
		}
		mustBeGoneMu.Lock()
		mustBeGone[pid] = "task of " + job
		mustBeGoneMu.Unlock()
	}

	// Registrations flap within a second or two when agents are shared:
	// watch for a while and require every instance, on its own node, throughout.
	consul := consulAPI(t, cluster.ConsulAddr())
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		entries, _, err := consul.Catalog().Service(job, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		nodes := map[string]bool{}
		for _, e := range entries {
			nodes[e.Node] = true
		}
		if len(entries) != n || len(nodes) != n {
			t.Fatalf("consul catalog has %d instances of %s on %d nodes, want %d on %d", len(entries), job, len(nodes), n, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
