package agent

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/agent/cluster/clustertest"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/greylist"
	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// Unit tests of the placement strategies' passes against the fake Nomad
// (clustertest.ScaleNomad), read directly (no watch): what each pass writes
// into node meta for a given cluster.

func fakeCluster(t *testing.T, nodes, jobs int) (*clustertest.ScaleNomad, cluster.View) {
	t.Helper()
	fake := clustertest.NewScaleNomad(nodes, jobs)
	return fake, cluster.New(fake.Serve(t))
}

// Packing: node-0000 runs 40,000 of its 49,152 harvestable MiB (high),
// node-0001 runs 1,000 (medium), the other four nothing (low, empty since
// now). A second pass over the same cluster writes nothing.
func TestPackerPassLabelsTiersOnce(t *testing.T) {
	fake, view := fakeCluster(t, 6, 1)
	fake.Mu.Lock()
	for i, mb := range []int{40000, 1000} {
		fake.Allocs[i].AllocatedResources = &nomadapi.AllocatedResources{Tasks: map[string]*nomadapi.AllocatedTaskResources{
			"t": {Memory: nomadapi.AllocatedMemoryResources{MemoryMB: int64(mb)}}}}
	}
	fake.Mu.Unlock()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := &packer{view: view, cfg: packing.Default(), releaseAfter: 10 * time.Minute, log: hclog.NewNullLogger(),
		metrics: newStrategyMetrics(prometheus.NewRegistry()), now: func() time.Time { return now }}
	if err := p.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ node, tier, empty string }{
		{"node-0000", "high", ""}, {"node-0001", "medium", ""},
		{"node-0002", "low", now.Format(time.RFC3339)}, {"node-0005", "low", now.Format(time.RFC3339)},
	} {
		if tier, empty := fake.Meta(c.node, proxy.PackTierKey), fake.Meta(c.node, proxy.EmptySinceKey); tier != c.tier || empty != c.empty {
			t.Errorf("%s: tier %q empty since %q, want %q and %q", c.node, tier, empty, c.tier, c.empty)
		}
	}
	if r := p.Report(); !r.Active || len(r.Nodes) != 6 || r.Nodes[0].Name != "node-0001" {
		t.Errorf("report %+v: want packing on, six nodes, the medium node first", r)
	}
	writes := fake.MetaWrites()
	now = now.Add(time.Minute)
	if err := p.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := fake.MetaWrites() - writes; n != 0 {
		t.Errorf("a second pass over an unchanged cluster wrote meta %d times", n)
	}
}

// Greylist: three failures of its own greylist node-0000; three evictions
// by the driver's reserve on node-0001 and two failures on node-0002 do
// not. When the counters reset the mark comes off.
func TestGreylistPassCountsOnlyTheNodesFaults(t *testing.T) {
	fake, view := fakeCluster(t, 3, 1)
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
	g := &greylister{view: view, tracker: greylist.NewTracker(3, time.Hour, now), reset: time.Hour, log: hclog.NewNullLogger(),
		metrics: newStrategyMetrics(prometheus.NewRegistry()), now: func() time.Time { return now }, seen: map[string]bool{}}
	if err := g.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{"node-0000": "true", "node-0001": "", "node-0002": ""} {
		if got := fake.Meta(node, proxy.GreylistKey); got != want {
			t.Errorf("%s: greylisted %q, want %q", node, got, want)
		}
	}
	now = now.Add(61 * time.Minute) // the counters reset; the failures are older than the reset
	if err := g.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fake.Meta("node-0000", proxy.GreylistKey); got != "" {
		t.Errorf("after the reset node-0000 is still greylisted (%q)", got)
	}
}

// Partition: the first pass takes the first three ready nodes by name; when
// one of them goes down the next pass gives its label back and takes the
// next node, leaving the other two where they are.
func TestPartitionPassKeepsItsSizeOnReadyNodes(t *testing.T) {
	fake, view := fakeCluster(t, 10, 1)
	three := 3
	p := &partitioner{view: view, store: history.NewStore(kv.NewMem(), ""), cfg: config.PartitionConfig{Enabled: true, InitialSize: &three},
		log: hclog.NewNullLogger(), metrics: newStrategyMetrics(prometheus.NewRegistry()), now: time.Now}
	short := func() (in []string) {
		for i := range 10 {
			if id := fmt.Sprintf("node-%04d", i); fake.Meta(id, proxy.PartitionKey) == proxy.PartitionShort {
				in = append(in, id)
			}
		}
		return in
	}
	if err := p.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := short(); !slices.Equal(got, []string{"node-0000", "node-0001", "node-0002"}) {
		t.Fatalf("partition %v, want the first three nodes", got)
	}
	fake.Mu.Lock()
	fake.Nodes[1].Status, fake.Nodes[1].ModifyIndex = "down", fake.Bump("nodes")
	fake.Mu.Unlock()
	if err := p.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := short(); !slices.Equal(got, []string{"node-0000", "node-0002", "node-0003"}) {
		t.Fatalf("partition %v after node-0001 went down, want it replaced by node-0003", got)
	}
	if st := p.State(); !slices.Equal(st.Nodes, []string{"node-0000", "node-0002", "node-0003"}) || st.Size != 3 {
		t.Fatalf("state %+v", st)
	}
}
