//go:build acceptance

package acceptance

import (
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history"
)

// policyMeta are the node meta keys the issue 8 policies write.
var policyMeta = []string{"harvest_pack_tier", "harvest_empty_since", "harvest_partition", "harvest_greylisted"}

// policyPlacer imports similar flat history for every client's tenant
// under its own KV prefix (so one constant class spans every node and the
// class constraint leaves the policies all the room), starts a placer with
// the policy configuration, and labels the nodes. At cleanup it stops the
// placer first and then removes the policies' node meta, so no later test
// inherits it.
func policyPlacer(t *testing.T, prefix, proxyExtra, extra string) (api, proxyAddr string) {
	t.Helper()
	now := time.Now().UTC().Truncate(history.Slot)
	series := map[history.TenantID]history.Series{}
	for i := range cluster.NomadClients {
		series[tenantOf(t, i)] = flatSeries(20+0.2*float64(i), now.Add(-10*24*time.Hour), 10, uint64(10+i))
	}
	importHistory(t, prefix, series)
	api, proxyAddr, stop := startPlacerWith(t, prefix, proxyExtra, extra)
	t.Cleanup(func() {
		stop()
		clearPolicyMeta(t)
	})
	oneClass := func(labels map[string][2]string) bool {
		first := labels[cluster.NomadClients[0].Name]
		for _, l := range labels {
			if l != first || l[0] == "unclassified" {
				return false
			}
		}
		return true
	}
	if labels := refreshAndWaitForLabels(t, api, oneClass); !oneClass(labels) {
		t.Fatalf("want one class on every node: %v", labels)
	}
	return api, proxyAddr
}

func clearPolicyMeta(t *testing.T) {
	c := nomadClient(t)
	for _, n := range cluster.NomadClients {
		meta := map[string]*string{}
		for _, k := range policyMeta {
			meta[k] = nil
		}
		if _, err := c.Nodes().Meta().Apply(&nomadapi.NodeMetaApplyRequest{NodeID: nodeID(t, n.Name), Meta: meta}, nil); err != nil {
			t.Errorf("clearing policy meta on %s: %v", n.Name, err)
		}
	}
}

// waitNodeMeta waits until node's meta key has want ("" = absent).
func waitNodeMeta(t *testing.T, node, key, want string, timeout time.Duration) {
	t.Helper()
	c := nomadClient(t)
	var got string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		n, _, err := c.Nodes().Info(nodeID(t, node), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got = n.Meta[key]; got == want {
			return
		}
	}
	t.Fatalf("node %s meta %s = %q after %s, want %q", node, key, got, timeout, want)
}

// policyJob is a harvested batch job of count tasks running a shell
// script, with its memory ask, job meta lines and job-level stanzas;
// restarts and reschedules off.
func policyJob(t *testing.T, id string, count, memory int, script, meta, extra string) string {
	return harvestJobSpec{ID: id, Count: count, CPU: 50, Memory: memory, Command: "/bin/sh", Args: []string{"-c", script},
		Meta: meta, Extra: extra}.file(t)
}

// runVia submits a job file through the placer's proxy.
func runVia(t *testing.T, proxyAddr, path string) {
	t.Helper()
	if out, err := nomadVia(t, proxyAddr, "job", "run", "-detach", path); err != nil {
		t.Fatalf("nomad job run through the proxy: %v\n%s", err, out)
	}
}

// running is an allocation whose task runs.
func isRunning(a *nomadapi.AllocationListStub) bool { return a.ClientStatus == "running" }

// hasConstraint reports whether a registered job carries a rule on ltarget.
func hasConstraint(job *nomadapi.Job, ltarget, operand, rtarget string) bool {
	for _, c := range job.Constraints {
		if c.LTarget == ltarget && c.Operand == operand && strings.Contains(c.RTarget, rtarget) {
			return true
		}
	}
	return false
}
