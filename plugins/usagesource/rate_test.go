package usagesource

import (
	"errors"
	"math"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func at(ms float64) time.Time { return t0.Add(time.Duration(ms * float64(time.Millisecond))) }

// reading is a counter of CPU seconds read in [before, after] ms.
func reading(value, before, after float64) Reading {
	return Reading{Value: value, Before: at(before), After: at(after)}
}

func TestAWellTimedWindowIsRated(t *testing.T) {
	var m Meter
	if _, ok, err := m.Next(reading(10, 0, 0.1)); ok || err != nil {
		t.Fatalf("the first reading rated a window: %v %v", ok, err)
	}
	// 0.6 cores over 50 ms
	r, ok, err := m.Next(reading(10.030, 50, 50.1))
	if !ok || err != nil {
		t.Fatalf("not rated: %v", err)
	}
	if math.Abs(r.PerSecond-0.6) > 1e-9 || r.Least > r.PerSecond || r.Least < 0.59 {
		t.Fatalf("rate %+v, want 0.6 and a least just under it", r)
	}
}

// A thread preempted between reading the counter and reading the clock: the
// old code took the late clock reading as the counter's time, so the next
// 50 ms window looked 30 ms long and a 0.6-core load read 1.5 cores. With the
// clock read on both sides, the late read shows as a wide interval; the window
// is merged into the next, which rates right.
func TestAReadingWithASlowClockReadIsRejected(t *testing.T) {
	var m Meter
	m.Next(reading(0, 0, 0.05))
	// the counter was read at 50 ms, the clock after it only at 80 ms
	if _, ok, err := m.Next(reading(0.030, 50, 80)); ok || !errors.Is(err, ErrUncertainTiming) {
		t.Fatalf("a reading 30 ms uncertain in a 65 ms window was rated: %v %v", ok, err)
	}
	r, ok, err := m.Next(reading(0.060, 100, 100.05))
	if !ok || err != nil {
		t.Fatalf("the next window was not rated: %v", err)
	}
	if math.Abs(r.PerSecond-0.6) > 0.01 {
		t.Fatalf("the merged window read %.3f cores, want 0.6", r.PerSecond)
	}
	if merged, skipped := m.Discarded(); merged != 1 || skipped != 0 {
		t.Fatalf("merged %d skipped %d, want 1 and 0", merged, skipped)
	}
}

// A badly timed start is replaced by a better-timed reading rather than
// holding every window hostage.
func TestABadlyTimedStartIsSkipped(t *testing.T) {
	var m Meter
	m.Next(reading(0, 0, 40))
	if _, ok, err := m.Next(reading(0.030, 70, 70.1)); ok || !errors.Is(err, ErrUncertainTiming) {
		t.Fatalf("rated a window from a 40 ms-wide start: %v", err)
	}
	r, ok, err := m.Next(reading(0.060, 120, 120.1))
	if !ok || err != nil || math.Abs(r.PerSecond-0.6) > 0.01 {
		t.Fatalf("rate %+v %v %v, want 0.6 from the skipped-to start", r, ok, err)
	}
	if merged, skipped := m.Discarded(); merged != 0 || skipped != 1 {
		t.Fatalf("merged %d skipped %d, want 0 and 1", merged, skipped)
	}
}

func TestACounterThatGoesBackStartsOver(t *testing.T) {
	var m Meter
	m.Next(reading(5, 0, 0))
	if _, ok, err := m.Next(reading(1, 50, 50)); ok || err == nil {
		t.Fatal("a counter that went back was rated")
	}
	if r, ok, _ := m.Next(reading(1.05, 100, 100)); !ok || math.Abs(r.PerSecond-1) > 1e-9 {
		t.Fatalf("after the reset: %+v %v", r, ok)
	}
}
