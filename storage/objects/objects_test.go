package objects

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// testWriter is a write path over four nodes nobody answers at (none up
// yet), for placement: n<env> of tenant <env>/fn, 1 to 4 GiB.
func testWriter(t *testing.T) *Writer {
	t.Helper()
	var cfgs []nodes.Config
	for i, env := range []string{"a", "b", "c", "d"} {
		cfgs = append(cfgs, nodes.Config{Node: nodes.Node{ID: "n" + env, Tenant: env + "/fn", Environment: env,
			Endpoint: "127.0.0.1:1", Capacity: int64(i+1) << 30}, AccessKey: "k", SecretKey: "s"})
	}
	ns, err := nodes.Connect(cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	counter := func() prometheus.Counter { return prometheus.NewCounter(prometheus.CounterOpts{Name: "c"}) }
	mem := kv.NewMem()
	return New(Options{KV: mem, Prefix: "harvest/", Catalog: catalog.NewStore(mem, "harvest/"), Nodes: ns, Log: hclog.NewNullLogger(),
		Metrics: Metrics{Writes: counter(), WriteFailures: counter(), Degraded: counter(), StorageFull: counter(), AmbiguousWrites: counter()}})
}

func TestDownNodesTakeNoReplicas(t *testing.T) {
	w := testWriter(t)
	for _, id := range []string{"na", "nb", "nc"} {
		w.nodes.SetUp(id, true)
	}
	w.Regrid()
	for i := 0; i < 50; i++ {
		p, err := w.Place(catalog.Entry{}, 1, Policy{Replicas: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range p.Nodes {
			if n == "nd" {
				t.Fatalf("a replica placed on a node never seen up: %v", p.Nodes)
			}
		}
	}
	if down := w.nodes.SetUp("na", false); down > time.Second {
		t.Fatalf("a node just gone down reports %s down", down)
	}
	w.MarkInGrid("na")
	if _, err := w.Place(catalog.Entry{}, 1, Policy{Replicas: 3}, nil); err == nil {
		t.Fatal("three replicas placed with two nodes up")
	}
}
