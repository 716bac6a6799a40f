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

// TestHourCandidatesSteerReplicasAwayFromTheSameBusyHours: every tenant is
// busy either in the day (8-20 h) or at night; a repair around a survivor
// busy in the day, with HourCandidates, puts the new replicas on tenants
// busy at night far more often than Algorithm 2's random pick does, and
// then no hour finds every replica busy. Without BusyHours the option
// changes nothing.
func TestHourCandidatesSteerReplicasAwayFromTheSameBusyHours(t *testing.T) {
	tenants := datacenter(7, 180, 2, 90, 40, 1<<30)
	for i, tn := range tenants {
		if i%2 == 0 {
			tn.BusyHours = hours(8, 20)
		} else {
			tn.BusyHours = night()
		}
	}
	byID := map[string]*Tenant{}
	for _, tn := range tenants {
		byID[tn.ID] = tn
	}
	survivor := tenants[0].Nodes[0].ID // busy in the day
	night := func(candidates int) (share float64, clash int) {
		g := Build(tenants)
		g.HourCandidates = candidates
		rng := rand.New(rand.NewPCG(3, 4))
		picked := 0
		for i := 0; i < 2000; i++ {
			p, err := g.Place(Request{Size: 1, Replicas: 2, Existing: []string{survivor}}, rng)
			if err != nil {
				t.Fatal(err)
			}
			allDay := true
			for _, id := range p.Nodes {
				n, _ := g.Node(id)
				if byID[n.Tenant].BusyHours[12] == 0 {
					picked++
					allDay = false
				}
			}
			if allDay {
				clash++
			}
		}
		return float64(picked) / 4000, clash
	}
	randomShare, randomClash := night(0)
	steeredShare, steeredClash := night(3)
	t.Logf("replicas on night-busy tenants: random %.2f (%d placements busy together at noon), 3 candidates %.2f (%d)",
		randomShare, randomClash, steeredShare, steeredClash)
	if steeredShare < randomShare+0.1 || steeredClash >= randomClash/4 {
		t.Fatalf("night share random %.2f, steered %.2f; all busy at noon random %d, steered %d: want steering to avoid the survivor's hours",
			randomShare, steeredShare, randomClash, steeredClash)
	}

	// without BusyHours the candidates cannot be told apart: the first is kept
	for _, tn := range tenants {
		tn.BusyHours = nil
	}
	a, b := Build(tenants), Build(tenants)
	b.HourCandidates = 3
	ra, rb := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
	pa, _ := a.Place(Request{Size: 1, Replicas: 3}, ra)
	pb, _ := b.Place(Request{Size: 1, Replicas: 3}, rb)
	if pa.Nodes[0] != pb.Nodes[0] {
		t.Fatalf("first replica %s vs %s: nothing taken yet, the candidates must not matter", pa.Nodes[0], pb.Nodes[0])
	}
}

// TestSteerFirstPutsFirstReplicasOnRarelyBusyTenants: half the tenants are
// busy every other hour, half one hour a day. With no writer's server,
// Algorithm 2's first pick lands on either about equally; with SteerFirst
// and three candidates, mostly on the rarely busy ones. Without SteerFirst
// the candidates do not touch the first replica.
func TestSteerFirstPutsFirstReplicasOnRarelyBusyTenants(t *testing.T) {
	tenants := datacenter(11, 180, 2, 90, 40, 1<<30)
	rare := map[string]bool{}
	for i, tn := range tenants {
		tn.BusyHours = make([]float64, 24)
		if i%2 == 0 {
			for h := 0; h < 24; h += 2 {
				tn.BusyHours[h] = 1
			}
		} else {
			tn.BusyHours[3], rare[tn.ID] = 1, true
		}
	}
	share := func(candidates int, steer bool) float64 {
		g := Build(tenants)
		g.HourCandidates, g.SteerFirst = candidates, steer
		rng := rand.New(rand.NewPCG(7, 8))
		onRare := 0
		for i := 0; i < 2000; i++ {
			p, err := g.Place(Request{Size: 1, Replicas: 1}, rng)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := g.Node(p.Nodes[0])
			if rare[n.Tenant] {
				onRare++
			}
		}
		return float64(onRare) / 2000
	}
	random, unsteered, steered := share(0, false), share(3, false), share(3, true)
	t.Logf("first replicas on rarely busy tenants: random %.2f, 3 candidates %.2f, 3 candidates steering the first %.2f", random, unsteered, steered)
	if math.Abs(unsteered-random) > 0.05 || steered < random+0.25 {
		t.Fatalf("rarely busy share: random %.2f, candidates without SteerFirst %.2f, with %.2f", random, unsteered, steered)
	}
}

// cellsKey names a placement's set of cells by the column of each row.
func cellsKey(cells []Cell) [Size]int {
	var k [Size]int
	for _, c := range cells {
		k[c.Row] = c.Col
	}
	return k
}

// TestPickJointlyKeepsAlgorithm2sCells: with five hour candidates chosen
// jointly (no tenant has BusyHours, so every combination is as good), each
// of the six sets of cells Algorithm 2 can give three replicas comes about
// as often as with one pick at a time (1/6 each); the joint pick takes the
// rows in order, which one pick at a time does in about 1/6 of placements.
// A fourth replica, alone in its round, still takes a random row, and a
// repair around a survivor completes its round with the other rows and
// columns.
func TestPickJointlyKeepsAlgorithm2sCells(t *testing.T) {
	const draws = 6000
	for _, jointly := range []bool{false, true} {
		g := Build(datacenter(5, 900, 2, 300, 100, 1<<30))
		g.HourCandidates, g.PickJointly = 5, jointly
		rng := rand.New(rand.NewPCG(9, 10))
		seen := map[[Size]int]int{}
		inOrder := 0
		for i := 0; i < draws; i++ {
			p, err := g.Place(Request{Size: 1, Replicas: 3}, rng)
			if err != nil || p.Degraded {
				t.Fatalf("%+v %v", p, err)
			}
			if p.Cells[0].Row == 0 && p.Cells[1].Row == 1 && p.Cells[2].Row == 2 {
				inOrder++
			}
			seen[cellsKey(p.Cells)]++
		}
		if jointly && inOrder != draws || !jointly && inOrder > draws/3 {
			t.Errorf("jointly %v: %d of %d placements took the rows in order", jointly, inOrder, draws)
		}
		if len(seen) != 6 {
			t.Errorf("jointly %v: %d sets of cells, want the 6 with distinct rows and columns: %v", jointly, len(seen), seen)
		}
		for k, n := range seen {
			if share := float64(n) / draws; math.Abs(share-1.0/6) > 0.02 {
				t.Errorf("jointly %v: cells %v in %.3f of placements, want 1/6", jointly, k, share)
			}
		}
		rows := [Size]int{}
		for i := 0; i < draws; i++ {
			p, err := g.Place(Request{Size: 1, Replicas: 4}, rng)
			if err != nil || p.Degraded {
				t.Fatalf("%+v %v", p, err)
			}
			rows[p.Cells[3].Row]++
		}
		for row, n := range rows {
			if share := float64(n) / draws; math.Abs(share-1.0/3) > 0.03 {
				t.Errorf("jointly %v: fourth replicas in row %d: %.3f, want 1/3", jointly, row, share)
			}
		}
		survivor, _ := g.Node(g.cells[1][2][0].Nodes[0].ID)
		for i := 0; i < 200; i++ {
			p, err := g.Place(Request{Size: 1, Replicas: 2, Existing: []string{survivor.ID}}, rng)
			if err != nil || p.Degraded {
				t.Fatalf("repair: %+v %v", p, err)
			}
			rowsTaken, colsTaken := map[int]bool{1: true}, map[int]bool{2: true}
			envs, racks := map[string]bool{g.tenant[survivor.Tenant].Environment: true}, map[string]bool{survivor.Rack: true}
			for k, c := range p.Cells {
				n, _ := g.Node(p.Nodes[k])
				env := g.tenant[n.Tenant].Environment
				if rowsTaken[c.Row] || colsTaken[c.Col] || envs[env] || racks[n.Rack] {
					t.Fatalf("jointly %v: repair around a survivor in row 1, column 2 (%s, %s) took %v on %v", jointly,
						g.tenant[survivor.Tenant].Environment, survivor.Rack, p.Cells, p.Nodes)
				}
				rowsTaken[c.Row], colsTaken[c.Col], envs[env], racks[n.Rack] = true, true, true, true
			}
		}
	}
}

// TestPickJointlyChoosesTheHighPeakReplicaAgainstTheOthers: the tenants
// of the low and medium rows are busy in the day; half of the high row's
// are busy in the day too, half at night. Chosen jointly, nearly every
// block gets a high-row tenant busy at night. One pick at a time (the
// first steered too), the high-row pick is as often the first, when no
// hour tells its candidates apart, as a later one. Jointly without
// SteerFirst one row, a third of the time the high one, keeps a random
// draw: about half of those blocks are busy at noon.
func TestPickJointlyChoosesTheHighPeakReplicaAgainstTheOthers(t *testing.T) {
	tenants := datacenter(13, 900, 2, 300, 100, 1<<30)
	clashes := func(jointly, steerFirst bool) int {
		g := Build(tenants)
		for i, tn := range tenants {
			if c, _ := g.CellOf(tn.ID); c.Row == Size-1 && i%2 == 1 {
				tn.BusyHours = night()
			} else {
				tn.BusyHours = hours(8, 20)
			}
		}
		g.HourCandidates, g.SteerFirst, g.PickJointly = 8, steerFirst, jointly
		rng := rand.New(rand.NewPCG(1, 2))
		clash := 0
		for i := 0; i < 2000; i++ {
			p, err := g.Place(Request{Size: 1, Replicas: 3}, rng)
			if err != nil {
				t.Fatal(err)
			}
			allDay := true
			for _, id := range p.Nodes {
				n, _ := g.Node(id)
				allDay = allDay && g.tenant[n.Tenant].BusyHours[12] == 1
			}
			if allDay {
				clash++
			}
		}
		return clash
	}
	oneByOne, jointly, unsteered := clashes(false, true), clashes(true, true), clashes(true, false)
	t.Logf("blocks with every replica busy at noon: one pick at a time %d, jointly %d, jointly without steering the first %d of 2000",
		oneByOne, jointly, unsteered)
	if jointly > 20 || oneByOne < 100 || unsteered < 200 || unsteered > 480 {
		t.Fatalf("blocks busy at noon: one pick at a time %d, jointly %d, jointly without steering the first %d", oneByOne, jointly, unsteered)
	}
}
