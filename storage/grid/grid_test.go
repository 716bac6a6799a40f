package grid

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// datacenter makes n tenants of nodesEach nodes, in envs environments and
// racks racks, with varied reimage rates and peaks.
func datacenter(seed uint64, n, nodesEach, envs, racks int, free int64) []*Tenant {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []*Tenant
	for i := 0; i < n; i++ {
		t := &Tenant{ID: fmt.Sprintf("t%03d", i), Environment: fmt.Sprintf("env%d", i%envs),
			ReimageRate: rng.ExpFloat64(), PeakCPU: rng.Float64() * 100}
		for j := 0; j < nodesEach; j++ {
			t.Nodes = append(t.Nodes, &Node{ID: fmt.Sprintf("%s-n%d", t.ID, j), Tenant: t.ID,
				Rack: fmt.Sprintf("rack%d", (i*nodesEach+j)%racks), Free: free})
		}
		out = append(out, t)
	}
	return out
}

func TestCellsHoldEqualSpace(t *testing.T) {
	g := Build(datacenter(1, 900, 3, 30, 50, 1<<30))
	free := g.CellFree()
	var total int64
	for r := range free {
		for c := range free[r] {
			total += free[r][c]
		}
	}
	for r := range free {
		for c := range free[r] {
			if share := float64(free[r][c]) / float64(total); math.Abs(share-1.0/9) > 0.01 {
				t.Errorf("cell %d,%d holds %.3f of the space, want 1/9", r, c, share)
			}
		}
	}
	// columns follow reimage rates: every tenant of column 0 reimages less than any of column 2
	maxCol0, minCol2 := 0.0, math.Inf(1)
	for _, tn := range datacenter(1, 900, 3, 30, 50, 1<<30) {
		c, _ := g.CellOf(tn.ID)
		switch c.Col {
		case 0:
			maxCol0 = max(maxCol0, tn.ReimageRate)
		case 2:
			minCol2 = min(minCol2, tn.ReimageRate)
		}
	}
	if maxCol0 > minCol2 {
		t.Fatalf("columns are not ordered by reimage rate: %.3f > %.3f", maxCol0, minCol2)
	}
}

func TestReplicasTakeDistinctRowsColumnsEnvironmentsRacks(t *testing.T) {
	tenants := datacenter(2, 90, 4, 12, 20, 1<<30)
	g := Build(tenants)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 4000; i++ {
		if i == 2000 { // the same rules when the candidates are chosen jointly
			g.HourCandidates, g.PickJointly = 5, true
		}
		writer := ""
		if i%2 == 0 {
			writer = tenants[i%len(tenants)].Nodes[0].ID
		}
		p, err := g.Place(Request{Size: 1 << 20, Replicas: 3, Writer: writer}, rng)
		if err != nil || p.Degraded {
			t.Fatalf("placement %d: %+v %v", i, p, err)
		}
		if writer != "" && p.Nodes[0] != writer {
			t.Fatalf("first replica on %s, not the writer %s", p.Nodes[0], writer)
		}
		rows, cols, envs, racks := map[int]bool{}, map[int]bool{}, map[string]bool{}, map[string]bool{}
		for k, id := range p.Nodes {
			n, _ := g.Node(id)
			c := p.Cells[k]
			env := g.tenant[n.Tenant].Environment
			if rows[c.Row] || cols[c.Col] || envs[env] || racks[n.Rack] {
				t.Fatalf("placement %d repeats a row, column, environment or rack: %+v", i, p)
			}
			rows[c.Row], cols[c.Col], envs[env], racks[n.Rack] = true, true, true, true
		}
	}
}

func TestFourthReplicaStartsANewRound(t *testing.T) {
	g := Build(datacenter(5, 90, 2, 20, 40, 1<<30))
	p, err := g.Place(Request{Size: 1, Replicas: 4}, rand.New(rand.NewPCG(6, 7)))
	if err != nil || p.Degraded || len(p.Nodes) != 4 {
		t.Fatalf("R=4: %+v %v", p, err)
	}
	rows := map[int]bool{}
	for _, c := range p.Cells[:3] {
		rows[c.Row] = true
	}
	if len(rows) != 3 {
		t.Fatalf("first round repeats a row: %+v", p.Cells)
	}
}

func TestBusyAndFullNodesAreSkippedAndSpaceRunsOut(t *testing.T) {
	tenants := datacenter(8, 9, 1, 9, 9, 10)
	g := Build(tenants)
	tenants[0].Nodes[0].Busy = true
	rng := rand.New(rand.NewPCG(9, 10))
	p, err := g.Place(Request{Size: 10, Replicas: 3, Writer: tenants[0].Nodes[0].ID}, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range p.Nodes {
		if id == tenants[0].Nodes[0].ID {
			t.Fatal("a busy node got a replica")
		}
	}
	g.Commit(p, 10)
	// 9 nodes of 10 bytes, one busy: two more objects fit on 8-3 = 5 and then 2 nodes
	p2, err := g.Place(Request{Size: 10, Replicas: 3}, rng)
	if err != nil {
		t.Fatal(err)
	}
	g.Commit(p2, 10)
	if _, err := g.Place(Request{Size: 10, Replicas: 3}, rng); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("with 2 free nodes left: %v, want ErrNoSpace", err)
	}
}

func TestDiversityThatCannotBeMetIsRefusedOrReported(t *testing.T) {
	// every tenant in one environment: the second replica cannot find a new one
	tenants := datacenter(11, 9, 2, 1, 18, 1<<20)
	g := Build(tenants)
	rng := rand.New(rand.NewPCG(12, 13))
	if _, err := g.Place(Request{Size: 1, Replicas: 3, Strict: true}, rng); !errors.Is(err, ErrNotDiverse) {
		t.Fatalf("strict: %v, want ErrNotDiverse", err)
	}
	p, err := g.Place(Request{Size: 1, Replicas: 3}, rng)
	if err != nil || !p.Degraded || p.Reason == "" || len(p.Nodes) != 3 {
		t.Fatalf("relaxed: %+v %v", p, err)
	}
	seen := map[string]bool{}
	for _, id := range p.Nodes {
		if seen[id] {
			t.Fatalf("two replicas on one node: %+v", p)
		}
		seen[id] = true
	}
}

// BenchmarkPlace10000Servers: one placement of three replicas among 1,000
// tenants of 10 servers, by Algorithm 2's random picks, with 5 hour
// candidates per pick (the first replica steered too), and with the 5
// candidates of each row chosen jointly (125 combinations), and with the
// most candidates a front allows when it chooses jointly (1,000).
func BenchmarkPlace10000Servers(b *testing.B) {
	for _, mode := range []struct {
		name           string
		candidates     int
		steer, jointly bool
	}{{"algorithm2", 0, false, false}, {"candidates5", 5, true, false}, {"jointly5", 5, true, true}, {"jointly10", MaxJointCandidates, true, true}} {
		b.Run(mode.name, func(b *testing.B) {
			tenants := datacenter(14, 1000, 10, 100, 400, 1<<40)
			for i, tn := range tenants {
				tn.BusyHours = make([]float64, hoursPerDay)
				for h := 0; h < 6; h++ { // six hours a day, starting at a tenant's own hour
					tn.BusyHours[(i+h)%hoursPerDay] = 1
				}
			}
			g := Build(tenants)
			g.HourCandidates, g.SteerFirst, g.PickJointly = mode.candidates, mode.steer, mode.jointly
			rng := rand.New(rand.NewPCG(15, 16))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := g.Place(Request{Size: 64 << 20, Replicas: 3}, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestRepairPlacesAroundSurvivors(t *testing.T) {
	g := Build(datacenter(17, 90, 2, 20, 40, 1<<30))
	rng := rand.New(rand.NewPCG(18, 19))
	for i := 0; i < 500; i++ {
		p, err := g.Place(Request{Size: 1, Replicas: 3}, rng)
		if err != nil {
			t.Fatal(err)
		}
		// the first replica's node was reimaged: place one around the other two
		r, err := g.Place(Request{Size: 1, Replicas: 1, Existing: p.Nodes[1:]}, rng)
		if err != nil || r.Degraded || len(r.Nodes) != 1 {
			t.Fatalf("repair: %+v %v", r, err)
		}
		for k, id := range p.Nodes[1:] {
			n, _ := g.Node(id)
			m, _ := g.Node(r.Nodes[0])
			if id == r.Nodes[0] || p.Cells[k+1].Row == r.Cells[0].Row || p.Cells[k+1].Col == r.Cells[0].Col ||
				g.tenant[n.Tenant].Environment == g.tenant[m.Tenant].Environment {
				t.Fatalf("repair replica not diverse from survivor %s: %+v vs %+v", id, r, p)
			}
		}
	}
}

// TestSmallClusterPlacesDiverselyWhenItCan: six tenants whose cells are
// column 0 rows 0-2, column 1 rows 0 and 2, column 2 row 1. A single greedy
// draw dead-ends whenever the first replica takes row 1 of column 0 (only
// column 2's row 1 is left for the last column); redrawing always finds a
// transversal, so no placement is degraded.
func TestSmallClusterPlacesDiverselyWhenItCan(t *testing.T) {
	sizes := []int64{1, 1, 1, 2, 2, 4} // by ID: thirds of the space give the cells above
	var tenants []*Tenant
	for i, s := range sizes {
		id := fmt.Sprintf("t%d", i)
		tenants = append(tenants, &Tenant{ID: id, Environment: fmt.Sprintf("env%d", i), ReimageRate: 1, PeakCPU: 50,
			Nodes: []*Node{{ID: id + "-n", Tenant: id, Rack: fmt.Sprintf("rack%d", i), Free: s << 30}}})
	}
	g := Build(tenants)
	want := map[string]Cell{"t0": {0, 0}, "t1": {1, 0}, "t2": {2, 0}, "t3": {0, 1}, "t4": {2, 1}, "t5": {1, 2}}
	for id, c := range want {
		if got, _ := g.CellOf(id); got != c {
			t.Fatalf("tenant %s in cell %+v, want %+v", id, got, c)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 500; i++ {
		p, err := g.Place(Request{Size: 1, Replicas: 3}, rng)
		if err != nil || p.Degraded {
			t.Fatalf("placement %d: %+v %v", i, p, err)
		}
		rows, cols := map[int]bool{}, map[int]bool{}
		for _, c := range p.Cells {
			rows[c.Row], cols[c.Col] = true, true
		}
		if len(rows) != 3 || len(cols) != 3 {
			t.Fatalf("placement %d repeats a row or column: %+v", i, p.Cells)
		}
	}
}

// An object whose survivors sit on often-reimaged tenants is repaired
// before one with as many survivors on calm tenants; fewer survivors come
// first whatever the rates.
func TestRepairOrderFewestSurvivorsThenRisk(t *testing.T) {
	calm := &Tenant{ID: "calm", ReimageRate: 0.1, Nodes: []*Node{{ID: "c1", Tenant: "calm"}, {ID: "c2", Tenant: "calm"}}}
	rough := &Tenant{ID: "rough", ReimageRate: 2, Nodes: []*Node{{ID: "r1", Tenant: "rough"}, {ID: "r2", Tenant: "rough"}}}
	g := Build([]*Tenant{calm, rough})
	onCalm, onRough, mixed := g.RepairRisk([]string{"c1", "c2"}), g.RepairRisk([]string{"r1", "r2"}), g.RepairRisk([]string{"c1", "r1"})
	if !(onRough > mixed && mixed > onCalm) {
		t.Fatalf("risks: rough %v, mixed %v, calm %v; want rough > mixed > calm", onRough, mixed, onCalm)
	}
	if g.RepairRisk([]string{"gone"}) != 2 {
		t.Errorf("an unknown node counts at %v, want the highest rate 2", g.RepairRisk([]string{"gone"}))
	}
	if !RepairFirst(2, onRough, 2, onCalm) || RepairFirst(2, onCalm, 2, onRough) {
		t.Error("equal survivors: the riskier must come first")
	}
	if !RepairFirst(1, g.RepairRisk([]string{"c1"}), 2, onRough) {
		t.Error("one survivor must come before two, whatever the rates")
	}
}

// hours is a BusyHours profile: busy (share 1) in [from, to), never
// otherwise.
func hours(from, to int) []float64 {
	out := make([]float64, hoursPerDay)
	for h := from; h < to; h++ {
		out[h] = 1
	}
	return out
}

// night is a BusyHours profile busy outside 8-20 h, the day's complement.
func night() []float64 {
	out := hours(0, hoursPerDay)
	for h := 8; h < 20; h++ {
		out[h] = 0
	}
	return out
}
