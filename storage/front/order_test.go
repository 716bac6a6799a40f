package front

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
)

// The repairer takes an object with one survivor first, then, among those
// with two, the one whose survivors' tenants reimage most often.
func TestRepairOrderIsSurvivorsThenRisk(t *testing.T) {
	calm := &grid.Tenant{ID: "calm", ReimageRate: 0.1, Nodes: []*grid.Node{{ID: "c1", Tenant: "calm"}, {ID: "c2", Tenant: "calm"}}}
	rough := &grid.Tenant{ID: "rough", ReimageRate: 3, Nodes: []*grid.Node{{ID: "r1", Tenant: "rough"}, {ID: "r2", Tenant: "rough"}}}
	b := &Backend{grid: grid.Build([]*grid.Tenant{calm, rough})}
	on := func(key string, nodes ...string) catalog.Entry {
		e := catalog.Entry{Bucket: "b", Key: key}
		for _, n := range nodes {
			e.Replicas = append(e.Replicas, catalog.Replica{Node: n})
		}
		return e
	}
	short := []catalog.Entry{on("calm-pair", "c1", "c2"), on("rough-pair", "r1", "r2"), on("mixed-pair", "c1", "r1"), on("alone", "c2")}
	b.orderRepairs(short)
	var got []string
	for _, e := range short {
		got = append(got, e.Key)
	}
	if want := []string{"alone", "rough-pair", "mixed-pair", "calm-pair"}; !slices.Equal(got, want) {
		t.Fatalf("repair order %v, want %v", got, want)
	}
}

// Reads go to the replica with the shortest expected wait: reads in flight
// (plus this one) times the node's moving average time to first byte.
func TestReadOrderFollowsTheExpectedWait(t *testing.T) {
	n := &Nodes{}
	order := func(ids ...string) string {
		var reps []catalog.Replica
		for _, id := range ids {
			reps = append(reps, catalog.Replica{Node: id})
		}
		n.readOrder(reps)
		var out []string
		for _, r := range reps {
			out = append(out, r.Node)
		}
		return strings.Join(out, ",")
	}
	done := n.startRead("a")
	if got := order("a", "b"); got != "b,a" {
		t.Errorf("nothing measured: %s, want the node with fewer reads in flight first", got)
	}
	done()
	n.observeLatency("a", 10*time.Millisecond)
	n.observeLatency("b", 30*time.Millisecond)
	if got := order("b", "a"); got != "a,b" {
		t.Errorf("a 3x faster: %s, want a first", got)
	}
	for range 3 {
		defer n.startRead("a")()
	}
	if got := order("a", "b"); got != "b,a" {
		t.Errorf("a busy with 3 reads (4 x 10 ms) against b idle (30 ms): %s, want b first", got)
	}
	if got := order("a", "b", "c"); got != "c,b,a" {
		t.Errorf("c unmeasured counts at the mean 20 ms: %s, want c first", got)
	}
	n.observeLatency("b", time.Millisecond)
	if l := n.latencyOf("b"); math.Abs(l-0.0242) > 1e-9 {
		t.Errorf("b's average after one 1 ms read: %v s, want 0.8 x 30 + 0.2 x 1 ms", l)
	}
}
