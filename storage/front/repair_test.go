package front

import (
	"slices"
	"testing"

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
