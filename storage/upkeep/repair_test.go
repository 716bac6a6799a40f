package upkeep

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// gridFront answers the repair risks from its grid, as the front answers
// them from its own; nothing else of the front is needed here.
type gridFront struct {
	Front
	g *grid.Grid
}

func (f gridFront) RepairRisks(survivors [][]string) []float64 {
	risk := make([]float64, len(survivors))
	for i, ids := range survivors {
		risk[i] = f.g.RepairRisk(ids)
	}
	return risk
}

// testUpkeep is an upkeep over mem, no nodes and front (nil: a test that
// needs one sets its own).
func testUpkeep(t *testing.T, mem kv.KV, front Front, repair RepairOptions) *Upkeep {
	t.Helper()
	ns, err := nodes.Connect(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{KV: mem, Prefix: "harvest/", Catalog: catalog.NewStore(mem, "harvest/"), Nodes: ns, Front: front,
		Log: hclog.NewNullLogger(), Metrics: NewMetrics(), Repair: repair})
}

// The repairer takes an object with one survivor first, then, among those
// with two, the one whose survivors' tenants reimage most often.
func TestRepairOrderIsSurvivorsThenRisk(t *testing.T) {
	calm := &grid.Tenant{ID: "calm", ReimageRate: 0.1, Nodes: []*grid.Node{{ID: "c1", Tenant: "calm"}, {ID: "c2", Tenant: "calm"}}}
	rough := &grid.Tenant{ID: "rough", ReimageRate: 3, Nodes: []*grid.Node{{ID: "r1", Tenant: "rough"}, {ID: "r2", Tenant: "rough"}}}
	u := testUpkeep(t, kv.NewMem(), gridFront{g: grid.Build([]*grid.Tenant{calm, rough})}, RepairOptions{})
	on := func(key string, nodes ...string) catalog.Entry {
		e := catalog.Entry{Bucket: "b", Key: key}
		for _, n := range nodes {
			e.Replicas = append(e.Replicas, catalog.Replica{Node: n})
		}
		return e
	}
	short := []catalog.Entry{on("calm-pair", "c1", "c2"), on("rough-pair", "r1", "r2"), on("mixed-pair", "c1", "r1"), on("alone", "c2")}
	u.orderRepairs(short)
	var got []string
	for _, e := range short {
		got = append(got, e.Key)
	}
	if want := []string{"alone", "rough-pair", "mixed-pair", "calm-pair"}; !slices.Equal(got, want) {
		t.Fatalf("repair order %v, want %v", got, want)
	}
}

// TestRepairAllowanceIsTakenFromAllReceiversOrNone: a repair refused
// because one receiving server has used its hourly allowance leaves the
// other servers' allowance untouched.
func TestRepairAllowanceIsTakenFromAllReceiversOrNone(t *testing.T) {
	r := newRepairer(nil, RepairOptions{PerServerPerHour: 1})
	if !r.allow([]string{"na"}) {
		t.Fatal("a fresh server refused its first replica")
	}
	if r.allow([]string{"nb", "na"}) {
		t.Fatal("na received two replicas within the hour")
	}
	if !r.allow([]string{"nb", "nc"}) {
		t.Fatal("nb's allowance was used up by a repair that was refused")
	}
}

// TestAStandbyAsksTheMaintainerToScan: a standing-by front kicked (as a
// scrub of its reads kicks it) asks for a scan through Consul; the
// maintainer's next retry sees the request once.
func TestAStandbyAsksTheMaintainerToScan(t *testing.T) {
	ctx := context.Background()
	mem := kv.NewMem()
	maint, standby := testUpkeep(t, mem, nil, RepairOptions{}), testUpkeep(t, mem, nil, RepairOptions{})
	standby.SetMaintainer(false)
	if maint.repair.askedToScan(ctx) {
		t.Fatal("the first read counted as a request")
	}
	standby.repair.askToScan(ctx)
	if !maint.repair.askedToScan(ctx) {
		t.Fatal("the maintainer missed the standby's request")
	}
	if maint.repair.askedToScan(ctx) {
		t.Fatal("one request counted twice")
	}
}

// TestStatusETAFollowsTheMeasuredRepairRate: before any repair the time
// left is at the limit of the servers up; then at the rate of the last ten
// minutes.
func TestStatusETAFollowsTheMeasuredRepairRate(t *testing.T) {
	u := testUpkeep(t, kv.NewMem(), nil, RepairOptions{PerServerPerHour: 30})
	u.repair.setScan(100, 12, 1)
	st := u.Status(2)
	// nothing repaired yet: the limit of two live servers, 60 per hour, 12 left
	if st.UnderReplicated != 12 || st.Lost != 1 || st.ETASeconds != 12.0/60*3600 {
		t.Fatalf("before any repair: %+v", st)
	}
	for i := 0; i < 6; i++ {
		u.repair.repaired(1, 10)
	}
	u.repair.mu.Lock()
	u.repair.done = append([]time.Time{time.Now().Add(-time.Hour)}, u.repair.done...) // outside the window
	u.repair.mu.Unlock()
	st = u.Status(2)
	// 6 in the last ten minutes: 36 per hour; 6 objects left: 10 minutes
	if st.Repaired != 6 || st.UnderReplicated != 6 || st.RepairRatePerHour != 36 || st.ETASeconds != 600 {
		t.Fatalf("after six repairs: %+v", st)
	}
}
