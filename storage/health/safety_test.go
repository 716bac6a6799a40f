package health

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
