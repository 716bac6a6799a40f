package storagesim

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
)

var t0 = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// threeServers is a datacenter of three one-server tenants: with R=3 every
// policy must put a replica on each server, so the outcome depends only on
// the reimage times.
func threeServers(reimages ...time.Duration) Datacenter {
	dc := Datacenter{Name: "tiny", Start: t0, Tenants: []Tenant{
		{ID: "search/a", Environment: "search", Servers: []string{"s1"}, ReimageRate: 0.1, PeakCPU: 20},
		{ID: "mail/b", Environment: "mail", Servers: []string{"s2"}, ReimageRate: 0.5, PeakCPU: 50},
		{ID: "ads/c", Environment: "ads", Servers: []string{"s3"}, ReimageRate: 2, PeakCPU: 80},
	}}
	for i, at := range reimages {
		dc.Reimages = append(dc.Reimages, history.Reimage{Node: []string{"s1", "s2", "s3"}[i%3], Time: t0.Add(at)})
	}
	return dc
}

// One block, written at day 5 of a 10-day span (mid-span, the steady rate's
// only slot); one replica re-created per hour of a reimaged server.
var tinyConfig = Config{Seed: 1, Replicas: 3, Blocks: 1, Span: 10 * 24 * time.Hour, RepairPerHour: 1}

const day = 24 * time.Hour

func TestEveryReplicaReimagedWithinTheRepairWindowLosesTheBlock(t *testing.T) {
	// s1 at day 6, s2 20 minutes later, s3 40 minutes later: the first
	// repair would come an hour after s1's reimage.
	dc := threeServers(6*day, 6*day+20*time.Minute, 6*day+40*time.Minute)
	for _, pol := range []Policy{Stock, Grid} {
		cfg := tinyConfig
		cfg.Policy = pol
		res, err := Run(dc, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Lost != 1 || res.Repairs != 0 || res.Reimages != 3 || res.DownToOne != 1 {
			t.Errorf("%s: %+v; want the block lost, no repair, 3 reimages, once down to one replica", pol, res)
		}
	}
}

func TestARepairBeforeTheLastReimageSavesTheBlock(t *testing.T) {
	// s1 at day 6 (repair due at +1h), s2 at +30 min (repair due at +1h30),
	// s3 at +2h: both repairs land first, so s3's reimage leaves two replicas.
	dc := threeServers(6*day, 6*day+30*time.Minute, 6*day+2*time.Hour)
	for _, pol := range []Policy{Stock, Grid} {
		cfg := tinyConfig
		cfg.Policy = pol
		res, err := Run(dc, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Lost != 0 || res.Repairs != 3 {
			t.Errorf("%s: %+v; want nothing lost and three replicas re-created (two before s3's reimage, one after)", pol, res)
		}
	}
	// The same three reimages a minute too close: s3 goes at +59 min,
	// before the first repair.
	dc = threeServers(6*day, 6*day+30*time.Minute, 6*day+59*time.Minute)
	res, _ := Run(dc, Config{Seed: 1, Policy: Grid, Replicas: 3, Blocks: 1, Span: 10 * day, RepairPerHour: 1}, nil)
	if res.Lost != 1 {
		t.Errorf("s3 reimaged before the first repair: %+v, want the block lost", res)
	}
}

func TestReimagesBeforeTheWriteOrOutsideTheSpanLoseNothing(t *testing.T) {
	dc := threeServers(1*day, 1*day+time.Minute, 1*day+2*time.Minute) // the block is written at day 5
	dc.Reimages = append(dc.Reimages, history.Reimage{Node: "s1", Time: t0.Add(11 * day)}, history.Reimage{Node: "s2", Time: t0.Add(-day)})
	res, err := Run(dc, Config{Seed: 1, Policy: Stock, Replicas: 3, Blocks: 1, Span: 10 * day, RepairPerHour: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 || res.Reimages != 3 || res.Repairs != 0 {
		t.Errorf("%+v: want 3 reimages in the span, nothing lost or repaired", res)
	}
}

func TestRepairsGoFewestSurvivorsFirstAtTheConfiguredRate(t *testing.T) {
	dc := Datacenter{Start: t0}
	for _, id := range []string{"a", "b", "c", "d"} {
		dc.Tenants = append(dc.Tenants, Tenant{ID: "env-" + id + "/f", Environment: "env-" + id, Servers: []string{id}})
	}
	w, err := buildWorld(dc.Tenants, 20)
	if err != nil {
		t.Fatal(err)
	}
	s := newState(w, Config{Policy: Stock, Replicas: 3, Blocks: 3, RepairPerHour: 1})
	// block 0 on a,b,c; block 1 on a,d (one replica already gone); block 2 on a,b,d
	for b, servers := range [][]int32{{0, 1, 2}, {0, 3}, {0, 1, 3}} {
		for _, n := range servers {
			s.add(int32(b), n)
		}
	}
	pending := s.wipe(0)
	s.order(pending)
	if !slices.Equal(pending, []int32{1, 0, 2}) {
		t.Fatalf("repair order %v, want block 1 (one survivor) before blocks 0 and 2 (two each, in write order)", pending)
	}
	if s.downToOne != 1 || s.lost != 0 || len(s.onServer[0]) != 0 {
		t.Errorf("after wiping a: down to one %d, lost %d, a holds %v", s.downToOne, s.lost, s.onServer[0])
	}
	if got := s.blockReplicas(1); !slices.Equal(got, []int32{3}) {
		t.Errorf("block 1 lives on %v, want [3] (d)", got)
	}
	s.repairOne(1)
	if got := s.blockReplicas(1); len(got) != 2 || got[1] == 3 {
		t.Errorf("repaired block 1 lives on %v, want d and one other server", got)
	}
	s.wipe(3)
	if s.lost != 0 || s.live[1] != 1 {
		t.Errorf("wiping d after block 1's repair: lost %d, block 1 has %d replicas; want 0 lost, 1 left", s.lost, s.live[1])
	}
}

func TestStockPlacementFollowsHDFSRacks(t *testing.T) {
	dc := Datacenter{Start: t0}
	for i := 0; i < 6; i++ { // six one-server tenants, racks of two
		id := string(rune('a' + i))
		dc.Tenants = append(dc.Tenants, Tenant{ID: "e" + id + "/f", Environment: "e" + id, Servers: []string{id}})
	}
	w, err := buildWorld(dc.Tenants, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := newState(w, Config{Seed: 3, Policy: Stock, Replicas: 4, Blocks: 1})
	for i := 0; i < 200; i++ {
		writer := int32(i % 6)
		got, _ := s.place.initial(writer)
		if len(got) != 4 || got[0] != writer || w.rackOf[got[1]] != w.rackOf[writer] || w.rackOf[got[2]] == w.rackOf[writer] {
			t.Fatalf("writer %d: replicas %v in racks %v, want the writer, its rack, a remote rack, then any", writer, got,
				[]int32{w.rackOf[got[0]], w.rackOf[got[1]], w.rackOf[got[2]]})
		}
		if slices.Contains(got[:3], got[3]) {
			t.Fatalf("fourth replica repeats a server: %v", got)
		}
		if r, _ := s.place.repair([]int32{0}); w.rackOf[r] == w.rackOf[0] {
			t.Fatalf("one survivor in rack 0: repair went to %d in the same rack, want a remote rack", r)
		}
		if r, _ := s.place.repair([]int32{0, 2}); w.rackOf[r] != w.rackOf[0] || r == 0 {
			t.Fatalf("survivors in racks 0 and 1: repair went to %d, want the other server of rack 0", r)
		}
	}
}

// smallGridWorld is a synthetic datacenter of about 200 servers and its world.
func smallGridWorld(t *testing.T) (Datacenter, *world) {
	t.Helper()
	p := synth.DefaultProfile(5, 200)
	p.Days, p.ReimageDays = 2, 60
	dc := FromSynth(synth.Generate(p), 30)
	w, err := buildWorld(dc.Tenants, 20)
	if err != nil {
		t.Fatal(err)
	}
	return dc, w
}

func TestGridPlacementKeepsReplicasOnDistinctCellsAndEnvironments(t *testing.T) {
	dc, w := smallGridWorld(t)
	s := newState(w, Config{Seed: 4, Policy: Grid, Replicas: 3, Blocks: 1})
	for i := 0; i < 500; i++ {
		writer := int32(s.rng.IntN(len(w.id)))
		got, degraded := s.place.initial(writer)
		if len(got) != 3 || got[0] != writer {
			t.Fatalf("placement %v, want 3 replicas starting at the writer %d", got, writer)
		}
		envs, rows, cols := map[string]bool{}, map[int]bool{}, map[int]bool{}
		for _, n := range got {
			tn := dc.Tenants[w.tenantOf[n]]
			c, _ := w.grid.CellOf(tn.ID)
			envs[tn.Environment], rows[c.Row], cols[c.Col] = true, true, true
		}
		if !degraded && (len(envs) != 3 || len(rows) != 3 || len(cols) != 3) {
			t.Fatalf("undegraded placement %v spans %d environments, %d rows, %d columns; want 3 of each", got, len(envs), len(rows), len(cols))
		}
	}
}

// TestClientWritersLeaveTheFirstReplicaToTheGrid: with writers that are
// not storage servers the writer's server is not the first replica (it
// holds a replica no more often than any server would at random), and the
// placement keeps the grid's diversity.
func TestClientWritersLeaveTheFirstReplicaToTheGrid(t *testing.T) {
	dc, w := smallGridWorld(t)
	s := newState(w, Config{Seed: 4, Policy: Grid, Replicas: 3, Blocks: 1, Writers: ClientWriters})
	onWriter := 0
	for i := 0; i < 500; i++ {
		writer := int32(s.rng.IntN(len(w.id)))
		got, degraded := s.place.initial(writer)
		if len(got) != 3 {
			t.Fatalf("placement %v, want 3 replicas", got)
		}
		if slices.Contains(got, writer) {
			onWriter++
		}
		rows := map[int]bool{}
		for _, n := range got {
			c, _ := w.grid.CellOf(dc.Tenants[w.tenantOf[n]].ID)
			rows[c.Row] = true
		}
		if !degraded && len(rows) != 3 {
			t.Fatalf("undegraded placement %v spans %d rows, want 3", got, len(rows))
		}
	}
	if onWriter > 25 { // 3 of ~500 servers: about 3 of 500 blocks by chance
		t.Errorf("%d of 500 blocks have a replica on their writer's server", onWriter)
	}
	if _, err := ParseWriters("datanode"); err == nil {
		t.Error("an unknown -writers value was accepted")
	}
}

func TestGridLosesFewerBlocksThanStockAndIsReproducible(t *testing.T) {
	p := synth.Profiles(21, 50)[3] // about 500 servers
	p.Days, p.ReimageDays = 1, 2*365
	dc := FromSynth(synth.Generate(p), 365)
	servers := 0
	for _, tn := range dc.Tenants {
		servers += len(tn.Servers)
	}
	const blocks = 60000
	results := map[Policy]map[int]Result{}
	for _, pol := range []Policy{Stock, Grid} {
		results[pol] = map[int]Result{}
		for _, r := range []int{3, 4} {
			res, err := Run(dc, Config{Seed: 1, Policy: pol, Replicas: r, Blocks: blocks, RepairPerHour: 30, Capacity: 2 * blocks * r / servers}, nil)
			if err != nil {
				t.Fatal(err)
			}
			results[pol][r] = res
			t.Logf("%+v", res)
		}
	}
	if s, g := results[Stock][3].Lost, results[Grid][3].Lost; s < 20 || g*10 > s {
		t.Errorf("R=3: grid lost %d, stock %d: want stock to lose some and grid at least 10x fewer", g, s)
	}
	if results[Grid][4].Lost != 0 {
		t.Errorf("grid lost %d blocks at R=4, want none", results[Grid][4].Lost)
	}
	for _, res := range []Result{results[Stock][3], results[Grid][3]} {
		if res.Unwritten != 0 || res.Reimages == 0 || res.Repairs == 0 {
			t.Errorf("%s: %d blocks unwritten, %d reimages, %d repairs: want every block written and some reimages repaired",
				res.Policy, res.Unwritten, res.Reimages, res.Repairs)
		}
	}
	again, _ := Run(dc, Config{Seed: 1, Policy: Grid, Replicas: 3, Blocks: blocks, RepairPerHour: 30, Capacity: 2 * blocks * 3 / servers}, nil)
	if again != results[Grid][3] {
		t.Fatalf("same seed, different result: %+v vs %+v", again, results[Grid][3])
	}
}

func TestFromReimagesSplitsHistoryFromReplay(t *testing.T) {
	a, b := history.TenantID{Environment: "mail", Function: "fe"}, history.TenantID{Environment: "ads", Function: "be"}
	events := map[history.TenantID][]history.Reimage{
		a: {{Node: "m1", Time: t0.Add(day)}, {Node: "m2", Time: t0.Add(2 * day)}, {Node: "m1", Time: t0.Add(40 * day)}},
		b: {{Node: "x1", Time: t0.Add(50 * day)}},
	}
	dc := FromReimages("csv", events, t0, 30)
	if !dc.Start.Equal(t0.Add(30*day)) || len(dc.Tenants) != 2 || len(dc.Reimages) != 2 {
		t.Fatalf("start %v, %d tenants, %d replayed reimages; want day 30, 2, 2", dc.Start, len(dc.Tenants), len(dc.Reimages))
	}
	// sorted by ID: ads/be then mail/fe; mail/fe had 2 reimages over 2 servers in 30 days: one per server per month
	if dc.Tenants[1].ID != "mail/fe" || !slices.Equal(dc.Tenants[1].Servers, []string{"m1", "m2"}) || dc.Tenants[1].ReimageRate != 1 {
		t.Errorf("tenant %+v, want mail/fe on m1, m2 at 1 reimage per server per month", dc.Tenants[1])
	}
	if dc.Tenants[0].ReimageRate != 0 {
		t.Errorf("ads/be had no reimage in history, rate %v", dc.Tenants[0].ReimageRate)
	}
}

// With the inventory, the servers never reimaged count: mail/fe's two
// reimages in 30 days are spread over its ten servers (0.2 per server per
// month, not 1), ads/be is there though it had no event, and the racks are
// the inventory's. An event on a node the inventory does not list, or
// lists under another tenant, is refused.
func TestFromInventoryCountsServersThatNeverFailed(t *testing.T) {
	a, b := history.TenantID{Environment: "mail", Function: "fe"}, history.TenantID{Environment: "ads", Function: "be"}
	var inv []csvfmt.InventoryNode
	for i := range 10 {
		inv = append(inv, csvfmt.InventoryNode{Tenant: a, Node: fmt.Sprintf("m%d", i), Rack: fmt.Sprintf("r%d", i%2)})
	}
	inv = append(inv, csvfmt.InventoryNode{Tenant: b, Node: "x1"}, csvfmt.InventoryNode{Tenant: b, Node: "x2"})
	events := map[history.TenantID][]history.Reimage{a: {{Node: "m1", Time: t0.Add(day)}, {Node: "m2", Time: t0.Add(2 * day)},
		{Node: "m1", Time: t0.Add(40 * day)}}}
	dc, err := FromInventory("log", inv, events, t0, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(dc.Tenants) != 2 || len(dc.Reimages) != 1 || dc.Tenants[0].ID != "ads/be" || len(dc.Tenants[0].Servers) != 2 {
		t.Fatalf("%+v: want ads/be with its two servers and one replayed reimage", dc)
	}
	if fe := dc.Tenants[1]; len(fe.Servers) != 10 || math.Abs(fe.ReimageRate-0.2) > 1e-9 || fe.Racks[3] != "r1" {
		t.Errorf("mail/fe %+v: want ten servers at 0.2 reimages per server per month in racks r0/r1", fe)
	}
	w, err := buildWorld(dc.Tenants, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.racks) != 3 || w.rackOf[w.index["m1"]] != w.rackOf[w.index["m3"]] || w.rackOf[w.index["m1"]] == w.rackOf[w.index["m2"]] ||
		w.rackOf[w.index["x1"]] != w.rackOf[w.index["x2"]] {
		t.Errorf("racks %v: want r0, r1 and one laid-out rack for ads/be", w.racks)
	}
	for _, bad := range []map[history.TenantID][]history.Reimage{
		{a: {{Node: "m99", Time: t0}}}, {b: {{Node: "m1", Time: t0}}},
	} {
		if _, err := FromInventory("log", inv, bad, t0, 30); err == nil {
			t.Errorf("events %v accepted", bad)
		}
	}
}
