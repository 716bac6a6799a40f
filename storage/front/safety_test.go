package front

import (
	"strings"
	"testing"
	"time"
)

// TestSafeModeHoldsWhenManyNodesLookGoneAtOnce: one node of six looking
// reimaged is forgotten; three within the window hold everything back,
// until they come back or an operator confirms.
func TestSafeModeHoldsWhenManyNodesLookGoneAtOnce(t *testing.T) {
	s := newSafeMode(SafeModeOptions{Share: 0.3, Window: time.Hour})
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	if !s.judge([]string{"n1"}, []string{"n2", "n3", "n4", "n5", "n6"}, 6, now) || s.reason() != "" {
		t.Fatal("one node of six gone: held back")
	}
	if s.judge([]string{"n2", "n3"}, []string{"n4", "n5", "n6"}, 6, now.Add(time.Minute)) {
		t.Fatal("three nodes of six gone within the hour: forgotten")
	}
	if why := s.reason(); !strings.Contains(why, "3 of 6") || !strings.Contains(why, "n1, n2, n3") {
		t.Fatalf("safe mode reason %q", why)
	}
	// n2 and n3 come back: below the share again
	if !s.judge(nil, []string{"n2", "n3", "n4", "n5", "n6"}, 6, now.Add(2*time.Minute)) || s.reason() != "" {
		t.Fatal("the nodes came back, safe mode stays on")
	}
	// they go again, then the operator confirms
	if s.judge([]string{"n2", "n3"}, nil, 6, now.Add(3*time.Minute)) {
		t.Fatal("held back expected")
	}
	if !s.confirm() || !s.judge([]string{"n2", "n3"}, nil, 6, now.Add(4*time.Minute)) || s.reason() != "" {
		t.Fatal("confirmed, still held back")
	}
	// outside the window old events no longer count
	s = newSafeMode(SafeModeOptions{Share: 0.3, Window: time.Hour})
	s.judge([]string{"n1", "n2"}, nil, 6, now)
	if !s.judge([]string{"n3"}, nil, 6, now.Add(2*time.Hour)) {
		t.Fatal("events older than the window still count")
	}
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
	b := testBackend(t, RepairOptions{})
	n := b.nodes
	n.minFree = 100
	capacity := n.capacity["na"] // 1 GiB
	if !n.reserveOn([]string{"na"}, 300) || n.Room("na") != capacity-300 {
		t.Fatalf("room after a 300-byte part: %d", n.Room("na"))
	}
	n.committedOn([]string{"na"}, 300, 300)
	n.orphaned("na", 300)
	if n.Room("na") != capacity-300 {
		t.Fatalf("an orphan stopped counting: %d", n.Room("na"))
	}
	n.collected("na", 300)
	if n.Room("na") != capacity {
		t.Fatalf("room after the GC: %d", n.Room("na"))
	}
	n.setDiskFree("na", 1000)
	if !n.reserveOn([]string{"na"}, 500) || n.Room("na") != 1000-100-500 {
		t.Fatalf("room on a nearly full disk: %d, want 400", n.Room("na"))
	}
	if n.reserveOn([]string{"na", "nb"}, 401) {
		t.Fatal("a write past the disk's floor was reserved")
	}
	if n.Room("nb") != n.capacity["nb"] {
		t.Fatal("a refused reservation held bytes on another node")
	}
}
