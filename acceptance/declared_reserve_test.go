//go:build acceptance

package acceptance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/kv"
)

// waitReserve waits until node's harvest driver fingerprints the reserve
// cores from source (tenant, policy or config), and returns how long it
// took.
func waitReserve(t *testing.T, node, cores, source string, timeout time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	var got [2]string
	for deadline := began.Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		n, _, err := nomadClient(t).Nodes().Info(nodeID(t, node), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = [2]string{n.Attributes["driver.harvest.reserve_cores"], n.Attributes["driver.harvest.reserve_cores_source"]}
		if got == [2]string{cores, source} {
			return time.Since(began)
		}
	}
	t.Fatalf("%s fingerprints a reserve of %s cores from %q after %s, want %s from %q", node, got[0], got[1], timeout, cores, source)
	return 0
}

// refusal is the message of the driver's refusal to start a's task, if it
// refused it.
func refusal(a *nomadapi.Allocation) (string, bool) {
	for _, st := range a.TaskStates {
		for _, ev := range st.Events {
			for _, m := range []string{ev.DisplayMessage, ev.DriverError, ev.Message} {
				if strings.Contains(m, "below the primary tenant's reserve") {
					return m, true
				}
			}
		}
	}
	return "", false
}

// TestDriverHonoursTheDeclaredReserve: a tenant declaration written to
// Consul KV as the placer's PUT /v1/tenants stores it (reserve_cpu 1.5
// cores for one client's tenant, memory undeclared) replaces the reserve of
// the client's plugin config (0.5 cores, 512 MiB) within the driver's
// 10-second refresh: the driver fingerprints it with its source, and a
// harvested task of 0.5 cores that started on the node under the config's
// reserve (2 - 0.5 = 1.5 free >= 0.5 + 0.25 margin) is refused (1.5 <
// 1.5 + 0.25). Deleting the declaration gives the config's reserve back and
// the same task starts again.
func TestDriverHonoursTheDeclaredReserve(t *testing.T) {
	if len(cluster.NomadClients) < 5 {
		t.Fatalf("want 5 clients, have %d", len(cluster.NomadClients))
	}
	node, id := cluster.NomadClients[4].Name, tenantOf(t, 4)
	store := history.NewStore(kv.NewConsul(consulAPI(t, cluster.ConsulAddr())), "harvest/")
	doc := declare.TenantDocument(id)
	ctx := context.Background()
	var existing declare.Tenant
	if ok, err := store.GetDocument(ctx, doc, &existing); err != nil || ok {
		t.Fatalf("%s already declared (%v): the test would overwrite it", id, err)
	}
	t.Cleanup(func() {
		if err := store.DeleteDocument(ctx, doc); err != nil {
			t.Errorf("delete the declaration: %v", err)
		}
		waitReserve(t, node, "0.5", "config", 30*time.Second) // later tests see the config's reserve
	})
	waitReserve(t, node, "0.5", "config", 30*time.Second)

	mhz := mhzFor(t, node, 0.5)
	// run starts a one-task job of 0.5 cores on node and waits for its
	// allocation to run or to fail; it returns the allocation.
	run := func(name string) *nomadapi.Allocation {
		t.Helper()
		jobID := uniqueName(name)
		purgeJob(t, jobID)
		nomadCLI(t, "job", "run", "-detach", harvestJobSpec{ID: jobID, Count: 1, CPU: mhz, Memory: 32,
			Command: "/bin/sleep", Args: []string{"300"},
			Extra: fmt.Sprintf("constraint {\n    attribute = \"${node.unique.name}\"\n    value     = %q\n  }", node)}.file(t))
		stubs := waitAllocs(t, jobID, 1, 30*time.Second, func(a *nomadapi.AllocationListStub) bool {
			return a.ClientStatus == nomadapi.AllocClientStatusRunning || a.ClientStatus == nomadapi.AllocClientStatusFailed
		})
		if stubs[0].NodeName != node {
			t.Fatalf("job %s placed on %s, not %s", jobID, stubs[0].NodeName, node)
		}
		a, _, err := nomadClient(t).Allocations().Info(stubs[0].ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	stop := func(a *nomadapi.Allocation) {
		t.Helper()
		if _, _, err := nomadClient(t).Jobs().Deregister(a.JobID, false, nil); err != nil {
			t.Fatal(err)
		}
		waitAllocs(t, a.JobID, 1, 30*time.Second, func(s *nomadapi.AllocationListStub) bool { return s.ClientStatus == nomadapi.AllocClientStatusComplete })
	}

	// Under the config's reserve the task fits.
	before := run("acc-reserve-before")
	if before.ClientStatus != nomadapi.AllocClientStatusRunning {
		t.Fatalf("under the config's reserve the task did not start: %s %+v", before.ClientStatus, before.TaskStates)
	}
	stop(before)

	// The tenant declares 1.5 cores: the driver follows and refuses the task.
	cores := 1.5
	if err := store.PutDocument(ctx, doc, declare.Tenant{Environment: id.Environment, Function: id.Function,
		TenantValues: declare.TenantValues{ReserveCPU: &cores}}); err != nil {
		t.Fatal(err)
	}
	took := waitReserve(t, node, "1.5", "tenant", 30*time.Second)
	n, _, err := nomadClient(t).Nodes().Info(nodeID(t, node), nil)
	if err != nil {
		t.Fatal(err)
	}
	if mem, from := n.Attributes["driver.harvest.reserve_memory"], n.Attributes["driver.harvest.reserve_memory_source"]; mem != "512MiB" || from != "config" {
		t.Fatalf("memory reserve %q from %q, want the config's 512 MiB (the tenant declares no memory)", mem, from)
	}
	t.Logf("%s fingerprinted the declared reserve %.1fs after it was written", node, took.Seconds())
	refused := run("acc-reserve-declared")
	msg, ok := refusal(refused)
	if refused.ClientStatus != nomadapi.AllocClientStatusFailed || !ok || !strings.Contains(msg, "reserve of 1.50 cores") {
		t.Fatalf("under the declared reserve: %s, refusal %q", refused.ClientStatus, msg)
	}
	t.Logf("refused: %s", msg)

	// Deleting the declaration gives the config's reserve back.
	if err := store.DeleteDocument(ctx, doc); err != nil {
		t.Fatal(err)
	}
	took = waitReserve(t, node, "0.5", "config", 30*time.Second)
	t.Logf("%s fingerprinted the config's reserve again %.1fs after the deletion", node, took.Seconds())
	after := run("acc-reserve-after")
	if after.ClientStatus != nomadapi.AllocClientStatusRunning {
		t.Fatalf("after the deletion the task did not start: %s %+v", after.ClientStatus, after.TaskStates)
	}
}
