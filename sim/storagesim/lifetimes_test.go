package storagesim

import (
	"slices"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
)

// fourServers is threeServers and a fourth one-server tenant, s4.
func fourServers() Datacenter {
	dc := threeServers()
	dc.Tenants = append(dc.Tenants, Tenant{ID: "maps/d", Environment: "maps", Servers: []string{"s4"}, ReimageRate: 0.2, PeakCPU: 30})
	return dc
}

// TestAServerTakesReplicasOnlyWhileInService: s4 joins at day 5 of 10 and
// s1 retires at day 8. Before s4 joins every block must go to s1-s3; s1's
// replicas move off it when it retires (to s4, the only server holding none
// of them), so the retirement loses nothing, and nothing is written to s1
// afterwards.
func TestAServerTakesReplicasOnlyWhileInService(t *testing.T) {
	dc := fourServers()
	dc.Presence = map[string]Presence{"s4": {Joined: t0.Add(5 * day)}, "s1": {Retired: t0.Add(8 * day)}}
	for _, pol := range []Policy{Stock, Grid} {
		cfg := tinyConfig
		cfg.Policy, cfg.Blocks = pol, 100
		res, err := Run(dc, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		// blocks 0-49 are written before day 5 (all on s1-s3); of blocks 50-79, written
		// before day 8, those with a replica on s1 move too
		if res.Lost != 0 || res.Retirements != 1 || res.Drained < 50 || res.Drained > 80 || res.Unwritten != 0 {
			t.Errorf("%s: %+v; want no loss, one retirement, s1's 50-80 replicas drained, every block written", pol, res)
		}

		w, err := buildWorld(dc.Tenants, 20)
		if err != nil {
			t.Fatal(err)
		}
		events, err := w.presenceEvents(dc, cfg.Span)
		if err != nil {
			t.Fatal(err)
		}
		s4 := w.index["s4"]
		if !w.absent[s4] || len(events) != 2 {
			t.Fatalf("%s: s4 in service at the start (%v) or events %+v", pol, !w.absent[s4], events)
		}
		s := newState(w, cfg)
		for b := int32(0); b < 50; b++ {
			s.write(b)
			if slices.Contains(s.blockReplicas(b), s4) {
				t.Fatalf("%s: block %d placed on s4 before it joined: %v", pol, b, s.blockReplicas(b))
			}
		}
	}
}

// TestFromLifetimesReplaysFailuresJoinsAndRetirements: a disk log of four
// servers over two years: s1's disk fails in the second year and a new disk
// follows; s4 enters service in the second year; s3 is last seen half-way
// through it. The failure is replayed as a wipe, s4 joins, s3 retires, and a
// server seen to the end stays.
func TestFromLifetimesReplaysFailuresJoinsAndRetirements(t *testing.T) {
	y1, y2 := t0, t0.Add(365*day)
	end := y2.Add(365 * day)
	id := func(s string) history.TenantID { v, _ := history.ParseTenantID(s); return v }
	disks := []csvfmt.DiskLifetime{
		{Tenant: id("search/a"), Node: "s1", Rack: "r1", Disk: "d1", FirstSeen: y1, LastSeen: y2.Add(100 * day), Failed: y2.Add(100 * day)},
		{Tenant: id("search/a"), Node: "s1", Rack: "r1", Disk: "d1b", FirstSeen: y2.Add(101 * day), LastSeen: end},
		{Tenant: id("mail/b"), Node: "s2", Disk: "d2", FirstSeen: y1, LastSeen: end},
		{Tenant: id("ads/c"), Node: "s3", Rack: "r2", Disk: "d3", FirstSeen: y1, LastSeen: y2.Add(180 * day)},
		{Tenant: id("maps/d"), Node: "s4", Disk: "d4", FirstSeen: y2.Add(30 * day), LastSeen: end},
	}
	dc, err := FromLifetimes("disks", disks, 365)
	if err != nil {
		t.Fatal(err)
	}
	if !dc.Start.Equal(y2) || len(dc.Reimages) != 1 || dc.Reimages[0].Node != "s1" || len(dc.Tenants) != 4 {
		t.Fatalf("start %s, replayed %+v, %d tenants", dc.Start, dc.Reimages, len(dc.Tenants))
	}
	want := map[string]Presence{"s4": {Joined: y2.Add(30 * day)}, "s3": {Retired: y2.Add(180 * day)}}
	if len(dc.Presence) != 2 || dc.Presence["s4"] != want["s4"] || dc.Presence["s3"] != want["s3"] {
		t.Fatalf("presence %+v, want %+v", dc.Presence, want)
	}
	res, err := Run(dc, Config{Seed: 1, Policy: Grid, Replicas: 3, Blocks: 1000, RepairPerHour: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reimages != 1 || res.Retirements != 1 || res.Drained == 0 || res.Lost != 0 {
		t.Fatalf("%+v: want one wipe, one retirement drained, nothing lost", res)
	}
}

// TestReceiverLimitedRepairSpreadsOverEveryServer: with RepairLimitReceiver
// the blocks of twenty wiped servers are re-created by many servers at
// once, but none receives beyond its tokens: at 3 replicas an hour a
// server's token comes back a tenth per 2-minute pass, so over the first
// nine passes no server receives more than one replica, and the blocks
// are whole again long before the reimaged servers' own queues (one block
// per 20 minutes each) would have them.
func TestReceiverLimitedRepairSpreadsOverEveryServer(t *testing.T) {
	_, w := smallGridWorld(t)
	s := newState(w, Config{Seed: 9, Policy: Grid, Replicas: 3, Blocks: 6000, RepairPerHour: 3, RepairLimit: RepairLimitReceiver})
	for b := range 6000 {
		s.write(int32(b))
	}
	servers := make([]int32, len(w.id))
	for n := range servers {
		servers[n] = int32(n)
	}
	slices.SortFunc(servers, func(a, b int32) int { return len(s.onServer[b]) - len(s.onServer[a]) })
	q := s.repair.(*receiverQueue)
	var waiting []int32
	longest := 0 // the most blocks one wiped server left waiting
	for _, n := range servers[:20] {
		pending := s.wipe(n)
		waiting = append(waiting, pending...)
		longest = max(longest, len(pending))
		q.take(s, pending, 0)
	}
	held := q.waiting
	start := slices.Clone(s.used)
	passes := 0
	for now := receiverTick; q.waiting > 0; now += receiverTick {
		q.run(s, now)
		if passes++; passes <= 9 {
			for n := range s.used {
				if got := s.used[n] - start[n]; got > 1 && !slices.Contains(servers[:20], int32(n)) {
					t.Fatalf("server %d received %d replicas within 9 passes, beyond its one token", n, got)
				}
			}
		}
		if passes > 200 {
			t.Fatalf("%d blocks still waiting after 200 passes", q.waiting)
		}
	}
	for _, b := range waiting {
		if s.live[b] != 0 && s.live[b] != 3 {
			t.Fatalf("block %d has %d replicas after the queue emptied", b, s.live[b])
		}
	}
	t.Logf("%d blocks of 20 wiped servers whole again in %d passes of %s (%d servers); at 3 an hour each wiped server's own queue would take up to %.0f h",
		held, passes, receiverTick, len(w.id), float64(longest)/3)
	if passes*int(receiverTick/time.Minute) > 60*held/20/3 {
		t.Errorf("%d passes for %d blocks: no faster than the wiped servers' own queues", passes, held)
	}
	if _, err := ParseRepairLimit("sender"); err == nil {
		t.Error("an unknown repair limit was accepted")
	}
}

// TestTheFrontsSteeringReachesEveryGrid: FromSynth gives each tenant its
// busy hours; a run's Steering reaches the grid (through newState, as Run
// builds its state) and every grid re-built as the space fills, so with PickJointly client writers' blocks take their
// rows in order (the joint pick's order) before and after a regrid.
func TestTheFrontsSteeringReachesEveryGrid(t *testing.T) {
	dc, w := smallGridWorld(t)
	for _, tn := range dc.Tenants {
		if len(tn.BusyHours) != 24 {
			t.Fatalf("tenant %s has %d busy hours, want 24", tn.ID, len(tn.BusyHours))
		}
	}
	steering := Steering{HourCandidates: 5, SteerFirst: true, PickJointly: true}
	s := newState(w, Config{Seed: 4, Policy: Grid, Replicas: 3, Blocks: 1, Writers: ClientWriters, Steering: steering})
	for round := 0; round < 2; round++ {
		if round == 1 {
			w.regrid(1000, s.used)
		}
		if g := w.grid; g.HourCandidates != 5 || !g.SteerFirst || !g.PickJointly {
			t.Fatalf("round %d: grid steering %d %v %v", round, g.HourCandidates, g.SteerFirst, g.PickJointly)
		}
		for i := 0; i < 200; i++ {
			got, degraded := s.place.initial(int32(s.rng.IntN(len(w.id))))
			if degraded {
				continue
			}
			for k, n := range got {
				if c, _ := w.grid.CellOf(dc.Tenants[w.tenantOf[n]].ID); c.Row != k {
					t.Fatalf("round %d: placement %v: replica %d in row %d, want the rows in order", round, got, k, c.Row)
				}
			}
		}
	}
}
