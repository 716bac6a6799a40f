package partitioner

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// A unit test of the pass against the fake Nomad (nomadtest.ScaleNomad),
// read directly (no watch): what the pass writes into node meta for a
// given cluster.

// Partition: the first pass takes the first three ready nodes by name; when
// one of them goes down the next pass gives its label back and takes the
// next node, leaving the other two where they are.
func TestPartitionPassKeepsItsSizeOnReadyNodes(t *testing.T) {
	fake := nomadtest.NewScaleNomad(10, 1)
	view := cluster.New(fake.Serve(t))
	three := 3
	p := &Strategy{view: view, store: history.NewStore(kv.NewMem(), ""), cfg: config.PartitionConfig{Enabled: true, InitialSize: &three},
		log: hclog.NewNullLogger(), metrics: NewMetrics(prometheus.NewRegistry()), now: time.Now}
	short := func() (in []string) {
		for i := range 10 {
			if id := fmt.Sprintf("node-%04d", i); fake.Meta(id, proxy.PartitionKey) == proxy.PartitionShort {
				in = append(in, id)
			}
		}
		return in
	}
	if err := p.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := short(); !slices.Equal(got, []string{"node-0000", "node-0001", "node-0002"}) {
		t.Fatalf("partition %v, want the first three nodes", got)
	}
	fake.Mu.Lock()
	fake.Nodes[1].Status, fake.Nodes[1].ModifyIndex = "down", fake.Bump("nodes")
	fake.Mu.Unlock()
	if err := p.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := short(); !slices.Equal(got, []string{"node-0000", "node-0002", "node-0003"}) {
		t.Fatalf("partition %v after node-0001 went down, want it replaced by node-0003", got)
	}
	if st := p.State(); !slices.Equal(st.Nodes, []string{"node-0000", "node-0002", "node-0003"}) || st.Size != 3 {
		t.Fatalf("state %+v", st)
	}
}
