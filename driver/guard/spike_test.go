package guard

import "testing"

// The rule alone: no spike before the first interval's level is known; one
// peek above is not a spike, two are, at the lesser of the two; a failed
// peek breaks the run; after a spike its level is the new base, so the same
// load does not spike again.
func TestSpikeNeedsTwoPeeksInARowAboveTheMeasurement(t *testing.T) {
	var s Spike
	if _, ok := s.Peeked(3, 3, 0.5); ok {
		t.Fatal("a peek before any tick made a spike")
	}
	if _, ok := s.Peeked(3, 3, 0.5); ok {
		t.Fatal("peeks before the first interval's level is known made a spike")
	}
	for i := 0; i < 6; i++ {
		s.Peeked(0.5, 0.5, 0.5)
	}
	s.Ticked() // base: (2 x 3 + 6 x 0.5) / 8 = 1.125
	if got := s.Base(); got != 1.125 {
		t.Fatalf("base %v, want 1.125", got)
	}
	if _, ok := s.Peeked(1.5, 1.5, 0.5); ok { // 0.5 + 1.5 - 1.125 = 0.875: one core, as measured
		t.Fatal("a rise that stays within the measured whole core made a spike")
	}
	if _, ok := s.Peeked(3.6, 3.6, 0.5); ok {
		t.Fatal("one peek above made a spike")
	}
	s.Failed()
	if _, ok := s.Peeked(3.6, 3.6, 0.5); ok {
		t.Fatal("a failed peek did not break the run")
	}
	cpu, ok := s.Peeked(3.2, 3.1, 0.5) // least: 0.5 + 3.1 - 1.125 = 2.475
	if !ok || cpu != 2.475 {
		t.Fatalf("two peeks above: cpu %v, spike %v; want 2.475 (the lesser, from the least reading), true", cpu, ok)
	}
	// the cap now stands on 2.475: the same load is its new level
	if _, ok := s.Peeked(3.6, 3.6, cpu); ok {
		t.Fatal("the load that spiked spiked again")
	}
	if _, ok := s.Peeked(3.6, 3.6, cpu); ok {
		t.Fatal("the load that spiked spiked again on the second peek")
	}
}
