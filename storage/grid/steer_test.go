package grid

import (
	"math"
	"math/rand/v2"
	"testing"
)

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
