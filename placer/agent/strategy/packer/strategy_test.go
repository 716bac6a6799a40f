package packer

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// A unit test of the pass against the fake Nomad (nomadtest.ScaleNomad),
// read directly (no watch): what the pass writes into node meta for a
// given cluster.

// Packing: node-0000 runs 40,000 of its 49,152 harvestable MiB (high),
// node-0001 runs 1,000 (medium), the other four nothing (low, empty since
// now). A second pass over the same cluster writes nothing.
func TestPackerPassLabelsTiersOnce(t *testing.T) {
	fake := nomadtest.NewScaleNomad(6, 1)
	view := cluster.New(fake.Serve(t))
	fake.Mu.Lock()
	for i, mb := range []int{40000, 1000} {
		fake.Allocs[i].AllocatedResources = &nomadapi.AllocatedResources{Tasks: map[string]*nomadapi.AllocatedTaskResources{
			"t": {Memory: nomadapi.AllocatedMemoryResources{MemoryMB: int64(mb)}}}}
	}
	fake.Mu.Unlock()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := &Strategy{view: view, cfg: packing.Default(), releaseAfter: 10 * time.Minute, log: hclog.NewNullLogger(),
		metrics: NewMetrics(prometheus.NewRegistry()), now: func() time.Time { return now }}
	if err := p.Pass(context.Background()); err != nil {
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
	if err := p.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := fake.MetaWrites() - writes; n != 0 {
		t.Errorf("a second pass over an unchanged cluster wrote meta %d times", n)
	}
}
