package main

import (
	"math"
	"testing"
	"time"
)

// The reference timeline interpolates the counter between its readings and
// refuses to rate across a gap it missed.
func TestTheReferenceRatesBetweenItsReadings(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tl := &timeline{}
	for k := range 11 { // a reading every 2 ms, the counter at 0.5 cores
		tl.at = append(tl.at, t0.Add(time.Duration(2*k)*time.Millisecond))
		tl.v = append(tl.v, 0.5*0.002*float64(k))
	}
	if r, ok := tl.rate(t0.Add(3*time.Millisecond), t0.Add(17*time.Millisecond)); !ok || math.Abs(r-0.5) > 1e-9 {
		t.Fatalf("rate %v %v, want 0.5", r, ok)
	}
	if _, ok := tl.rate(t0.Add(-time.Millisecond), t0.Add(5*time.Millisecond)); ok {
		t.Fatal("rated from before the first reading")
	}
	tl.at = append(tl.at, t0.Add(40*time.Millisecond)) // a gap of 20 ms
	tl.v = append(tl.v, 0.02)
	if _, ok := tl.rate(t0.Add(5*time.Millisecond), t0.Add(30*time.Millisecond)); ok {
		t.Fatal("rated across a gap the reference missed")
	}
}

func TestDistOfIsOfAbsoluteErrors(t *testing.T) {
	d := distOf([]float64{-0.3, 0.1, 0.2, -0.05})
	if d.N != 4 || d.P50 != 0.1 || d.Max != 0.3 || d.P99 != 0.3 {
		t.Fatalf("%+v", d)
	}
}
