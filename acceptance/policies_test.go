//go:build acceptance

package acceptance

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
)

// TestPackingFillsMediumNodesAndAvoidsHighOnes (container-packing.txt):
// with packing on, harvested jobs of 800 MiB each (a node harvests 3,584
// MiB: 4,096 minus the 512 reserve) go where the placer's order says: the
// first to any low node, the next two to that node while it is medium,
// and once it is high (>= 60%) the fourth to another node. `harvestctl
// packing` lists the untouched nodes as releasable.
func TestPackingFillsMediumNodesAndAvoidsHighOnes(t *testing.T) {
	placerURL, proxyAddr := policyPlacer(t, "harvest-packing/", "", `
packing {
  enabled       = true
  interval      = "1s"
  release_after = "2s"
}`)
	var landed []string
	for i := 0; i < 4; i++ {
		before := mustRead(t, placerAPI(placerURL).Packing)
		if !before.Active || len(before.Nodes) != len(cluster.NomadClients) {
			t.Fatalf("packing report %+v", before)
		}
		job := uniqueName("acc-pack")
		purgeJob(t, job)
		runVia(t, proxyAddr, policyJob(t, job, 1, 800, "sleep 300", "", ""))
		alloc := waitAllocs(t, job, 1, 2*time.Minute, isRunning)[0]
		node := alloc.NodeName
		landed = append(landed, node)
		var tierThen string
		for _, n := range before.Nodes {
			if n.Name == node {
				tierThen = n.Tier
			}
		}
		// the placer's order: the job must land in the first node's tier
		if first := before.Nodes[0]; tierThen != first.Tier {
			t.Fatalf("job %d landed on %s (%s); the placer's first choice was %s (%s); scores: %s", i+1, node, tierThen, first.Name, first.Tier, scores(t, alloc.ID))
		}
		// the next job must see this one in the tiers: the report must count
		// every job on the node so far, not only the first (else the next job
		// is placed by a report from before this one)
		var onNode float64
		for _, n := range landed {
			if n == node {
				onNode += 800
			}
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			after := mustRead(t, placerAPI(placerURL).Packing)
			k := slices.IndexFunc(after.Nodes, func(n api.PackingNode) bool { return n.Name == node })
			if k >= 0 && after.Nodes[k].UsedMB >= onNode {
				waitNodeMeta(t, node, "harvest_pack_tier", after.Nodes[k].Tier, 15*time.Second)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the packing report never counted job %d on %s", i+1, node)
			}
		}
	}
	t.Logf("four 800 MiB jobs landed on %v", landed)
	if landed[1] != landed[0] || landed[2] != landed[0] {
		t.Fatalf("jobs 2 and 3 did not join the medium node %s: %v", landed[0], landed)
	}
	waitNodeMeta(t, landed[0], "harvest_pack_tier", "high", 10*time.Second)
	if landed[3] == landed[0] {
		t.Fatalf("job 4 went to the high node %s", landed[0])
	}
	time.Sleep(3 * time.Second) // release_after
	out := harvestCLI(t, "harvestctl", "packing", "-placer-addr", placerURL)
	t.Logf("harvestctl packing:\n%s", out)
	want := len(cluster.NomadClients) - 2
	if !strings.Contains(out, " high ") || !strings.Contains(out, "can be scaled in or released") ||
		strings.Count(out, " yes\n") != want {
		t.Fatalf("harvestctl packing: want %d releasable nodes and one high:\n%s", want, out)
	}
}

// TestShortPartitionKeepsLongJobsOffAndFollowsTheCutoff
// (hybrid-scheduling.txt): two nodes start on the short-job partition; a
// job declared long runs only off it; two short jobs finish, their mean
// moves the cutoff down, and the partition grows by one.
func TestShortPartitionKeepsLongJobsOffAndFollowsTheCutoff(t *testing.T) {
	placerURL, proxyAddr := policyPlacer(t, "harvest-partition/", "", `
partition {
  enabled        = true
  initial_cutoff = "90s"
  initial_size   = 2
  min_size       = 1
  max_size       = 4
  window         = 2
  grow           = 1
  shrink         = 1
}`)
	var st api.PartitionState
	for deadline := time.Now().Add(30 * time.Second); len(st.Nodes) != 2; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("partition %+v: want 2 nodes", st)
		}
		st = mustRead(t, placerAPI(placerURL).Partition)
	}
	partition := st.Nodes
	for _, n := range partition {
		waitNodeMeta(t, n, "harvest_partition", "short", 15*time.Second)
	}

	long := uniqueName("acc-long")
	purgeJob(t, long)
	runVia(t, proxyAddr, policyJob(t, long, 4, 32, "sleep 600", `harvest_expected = "2h"`, ""))
	for _, a := range waitAllocs(t, long, 4, 2*time.Minute, isRunning) {
		if slices.Contains(partition, a.NodeName) {
			t.Errorf("a task of the long job runs on %s, on the short partition %v", a.NodeName, partition)
		}
	}
	job, _, err := nomadClient(t).Jobs().Info(long, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(job.Meta["harvest_partition_reason"], "long: expected 2h0m0s > cutoff 1m30s") ||
		!hasConstraint(job, "${meta.harvest_partition}", "!=", "short") {
		t.Fatalf("long job meta %v constraints %v", job.Meta, job.Constraints)
	}

	for i := 0; i < 2; i++ {
		short := uniqueName("acc-short")
		purgeJob(t, short)
		runVia(t, proxyAddr, policyJob(t, short, 1, 32, "sleep 1", `harvest_expected = "10s"`, ""))
		waitAllocs(t, short, 1, time.Minute, complete)
	}
	for deadline := time.Now().Add(60 * time.Second); st.Moves == 0; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("the cutoff never moved: %+v", st)
		}
		st = mustRead(t, placerAPI(placerURL).Partition)
	}
	t.Logf("after two short runs: cutoff %s, size %d, nodes %v", st.Cutoff, st.Size, st.Nodes)
	if st.Cutoff >= 81*time.Second || st.Size != 3 {
		t.Fatalf("partition %+v: want the cutoff down by more than 10%% and 3 nodes", st)
	}
	for deadline := time.Now().Add(30 * time.Second); len(st.Nodes) != 3; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("partition nodes %v: want 3", st.Nodes)
		}
		st = mustRead(t, placerAPI(placerURL).Partition)
	}
	for _, n := range st.Nodes {
		waitNodeMeta(t, n, "harvest_partition", "short", 15*time.Second)
	}
}

// scores are Nomad's placement scores of an allocation, for failure messages.
func scores(t *testing.T, allocID string) string {
	a, _, err := nomadClient(t).Allocations().Info(allocID, nil)
	if err != nil || a.Metrics == nil {
		return fmt.Sprint(err)
	}
	var b strings.Builder
	for _, m := range a.Metrics.ScoreMetaData {
		fmt.Fprintf(&b, "\n  %s %.3f %v", m.NodeID[:8], m.NormScore, m.Scores)
	}
	return b.String()
}
