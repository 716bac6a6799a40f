package nodes

import (
	"testing"
	"time"
)

// testPool is two nodes, na of 1 GiB and nb of 2 GiB, neither reachable.
func testPool(t *testing.T) *Pool {
	t.Helper()
	var cfgs []Config
	for i, env := range []string{"a", "b"} {
		cfgs = append(cfgs, Config{Node: Node{ID: "n" + env, Tenant: env + "/fn", Environment: env,
			Endpoint: "127.0.0.1:1", Capacity: int64(i+1) << 30}, AccessKey: "k", SecretKey: "s"})
	}
	p, err := Connect(cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBusyFlagsExpire: a flag counts only when it says busy and was
// written within the expiry; a flag without a time is stale.
func TestBusyFlagsExpire(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		flag string
		want bool
	}{
		{`{"busy":true,"updated":"2026-11-21T11:59:30Z"}`, true},
		{`{"busy":true,"updated":"2026-11-21T11:50:00Z"}`, false},
		{`{"busy":false,"updated":"2026-11-21T11:59:59Z"}`, false},
		{`{"busy":true}`, false},
		{`{broken`, false},
	} {
		if got := parseBusy([]byte(c.flag), now, 2*time.Minute); got != c.want {
			t.Errorf("%s: busy %v, want %v", c.flag, got, c.want)
		}
	}
}

// TestRoomCountsPartsOrphansAndTheDisk: a node's room is its capacity less
// what it holds (committed, writes and parts in flight, orphans), and never
// more than its free disk less the floor.
func TestRoomCountsPartsOrphansAndTheDisk(t *testing.T) {
	n := testPool(t)
	n.minFree = 100
	capacity := n.capacity["na"] // 1 GiB
	if !n.Reserve([]string{"na"}, 300) || n.Room("na") != capacity-300 {
		t.Fatalf("room after a 300-byte part: %d", n.Room("na"))
	}
	n.Commit([]string{"na"}, 300, 300)
	n.Orphan("na", 300)
	if n.Room("na") != capacity-300 {
		t.Fatalf("an orphan stopped counting: %d", n.Room("na"))
	}
	n.Collected("na", 300)
	if n.Room("na") != capacity {
		t.Fatalf("room after the GC: %d", n.Room("na"))
	}
	n.SetDiskFree("na", 1000)
	if !n.Reserve([]string{"na"}, 500) || n.Room("na") != 1000-100-500 {
		t.Fatalf("room on a nearly full disk: %d, want 400", n.Room("na"))
	}
	if n.Reserve([]string{"na", "nb"}, 401) {
		t.Fatal("a write past the disk's floor was reserved")
	}
	if n.Room("nb") != n.capacity["nb"] {
		t.Fatal("a refused reservation held bytes on another node")
	}
}

// TestTheGridTakesThePlacementOptions: the grid the front places with
// carries the configured hour candidates, first-replica steering and joint
// pick.
func TestTheGridTakesThePlacementOptions(t *testing.T) {
	cfgs := []Config{{Node: Node{ID: "na", Tenant: "a/fn", Environment: "a", Endpoint: "127.0.0.1:1", Capacity: 1 << 30},
		AccessKey: "k", SecretKey: "s"}}
	for _, o := range []PoolOptions{{HourCandidates: 5, SteerFirst: true, PickJointly: true}, {HourCandidates: 3}} {
		ns, err := Connect(cfgs, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		if g := ns.Grid(); g.HourCandidates != o.HourCandidates || g.SteerFirst != o.SteerFirst || g.PickJointly != o.PickJointly {
			t.Errorf("options %+v: grid has %d candidates, steer first %v, jointly %v", o, g.HourCandidates, g.SteerFirst, g.PickJointly)
		}
	}
}
