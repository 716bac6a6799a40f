package guard

import (
	"fmt"
	"time"

	"github.com/harvest-platform/harvest/contract"
)

// Hysteresis configures admission.
type Hysteresis struct {
	AdmitWindow time.Duration // how far back the peak primary is taken
	AdmitMargin Resources     // asked for on top of the reserve
}

// DefaultHysteresis is 30 s and 1 core / 256 MiB.
func DefaultHysteresis() Hysteresis {
	return Hysteresis{AdmitWindow: 30 * time.Second, AdmitMargin: Resources{CPU: 1, MemoryMiB: 256}}
}

// Tracker remembers recent primary samples to give their peak.
type Tracker struct {
	window  time.Duration
	samples []sample
}

type sample struct {
	at time.Time
	r  Resources
}

// NewTracker keeps samples of the last window.
func NewTracker(window time.Duration) *Tracker { return &Tracker{window: window} }

// Observe records the primary's use at a time.
func (t *Tracker) Observe(at time.Time, primary Resources) {
	t.samples = append(t.samples, sample{at, primary})
	cut := 0
	for cut < len(t.samples) && at.Sub(t.samples[cut].at) > t.window {
		cut++
	}
	t.samples = t.samples[cut:]
}

// Peak is the largest use in each dimension over the window (zero when
// nothing was observed).
func (t *Tracker) Peak() Resources {
	var p Resources
	for _, s := range t.samples {
		p.CPU = max(p.CPU, s.r.CPU)
		p.MemoryMiB = max(p.MemoryMiB, s.r.MemoryMiB)
	}
	return p
}

// Admit decides whether a task asking for ask may start now: with the
// primary at its recent peak, the node must keep the reserve plus the
// margin free after the task's allocation. The error says by how much not.
func Admit(s State, peakPrimary Resources, h Hysteresis, ask Resources) error {
	if unclampedRoom(s, peakPrimary, h).Covers(ask) {
		return nil
	}
	s = atPeak(s, peakPrimary)
	after := s.Free().Sub(ask)
	p := RoundUp(s.Primary)
	return fmt.Errorf(contract.RefusalPrefix+"(%.2f cores, %.0f MiB) would leave %.2f cores and %.0f MiB free, "+
		"below the primary tenant's reserve of %.2f cores and %.0f MiB plus a margin of %.2f cores and %.0f MiB "+
		"(primary tenant at up to %.0f cores and %.0f MiB over the last %s; capacity %.2f cores, %.0f MiB)",
		ask.CPU, ask.MemoryMiB, after.CPU, after.MemoryMiB, s.Reserve.CPU, s.Reserve.MemoryMiB,
		h.AdmitMargin.CPU, h.AdmitMargin.MemoryMiB, p.CPU, p.MemoryMiB, h.AdmitWindow, s.Capacity.CPU, s.Capacity.MemoryMiB)
}

// Room is the largest allocation Admit would let start now: what is free
// with the primary at its recent peak (rounded up, as Free does), less the
// reserve and the margin, never below zero. The driver publishes it in its
// fingerprint so that Nomad's scheduler, told it by the proxy's constraint,
// places a task only where it fits, as YARN-H's NodeManager reports the
// primary's rounded use with the containers' allocations in its heartbeat
// for the ResourceManager to schedule against
// (history-based-harvesting.txt, Section 5, "Primary tenant awareness").
func Room(s State, peakPrimary Resources, h Hysteresis) Resources {
	r := unclampedRoom(s, peakPrimary, h)
	return Resources{max(0, r.CPU), max(0, r.MemoryMiB)}
}

// unclampedRoom is Room below zero too, when the reserve is already broken.
func unclampedRoom(s State, peakPrimary Resources, h Hysteresis) Resources {
	return atPeak(s, peakPrimary).Free().Sub(s.Reserve.Add(h.AdmitMargin))
}

// atPeak is s with the primary at the larger of its use now and its peak.
func atPeak(s State, peakPrimary Resources) State {
	s.Primary = Resources{max(s.Primary.CPU, peakPrimary.CPU), max(s.Primary.MemoryMiB, peakPrimary.MemoryMiB)}
	return s
}
