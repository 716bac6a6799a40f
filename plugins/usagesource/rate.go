package usagesource

// Rating a cumulative counter (CPU seconds) over windows whose timing is
// known. A reading is taken between two clock readings (ReadCounter), so
// its time is known to lie in [Before, After]: a thread preempted between
// reading the counter and reading the clock shows as a wide interval instead
// of silently shortening or stretching the window (a window 30 ms short of
// its 50 ms reads a 0.6-core load as 1.5 cores). A window whose two readings
// leave its length uncertain by more than MaxTimingError of it is not rated:
// it is merged into the next one (the start is kept), or, when the new
// reading is the better-timed of the two, skipped (the start moves to it).

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// MaxTimingError is the largest share of a window's length by which its
// timing may be uncertain for the window to be rated.
const MaxTimingError = 0.1

// ErrUncertainTiming is returned for a window not rated because of its
// timing; the reading is not lost (merged) or is the new start (skipped).
var ErrUncertainTiming = errors.New("window's timing too uncertain to rate")

// Reading is a cumulative counter's value and the clock interval in which
// it was read.
type Reading struct {
	Value         float64
	Before, After time.Time
}

// At is the reading's best time: the middle of its interval.
func (r Reading) At() time.Time { return r.Before.Add(r.After.Sub(r.Before) / 2) }

// Width is how uncertain the reading's time is.
func (r Reading) Width() time.Duration { return r.After.Sub(r.Before) }

// ReadCounter reads a counter between two readings of clock.
func ReadCounter(clock func() time.Time, read func() (float64, error)) (Reading, error) {
	before := clock()
	v, err := read()
	after := clock()
	return Reading{Value: v, Before: before, After: after}, err
}

// Rate is a counter's increase per second over one window.
type Rate struct {
	PerSecond float64       // over the window's best length (between the readings' middles)
	Least     float64       // over the longest the window may have lasted: what survives its timing's uncertainty
	Window    time.Duration // the best length
	Longest   time.Duration // the longest the window may have lasted (Least's)
}

// Meter rates successive readings of one counter. Safe for concurrent use.
type Meter struct {
	mu      sync.Mutex
	start   Reading
	has     bool
	merged  uint64
	skipped uint64
}

// Start sets the reading the next window starts from.
func (m *Meter) Start(r Reading) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.start, m.has = r, true
}

// StartReading is the reading the next window starts from.
func (m *Meter) StartReading() Reading {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.start
}

// Reset forgets the start: the next reading only starts a window.
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.has = false
}

// Discarded counts the windows not rated for their timing: merged into the
// next, and skipped.
func (m *Meter) Discarded() (merged, skipped uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.merged, m.skipped
}

// Next rates the window from the start to r and makes r the next start. The
// first reading only starts a window (ok false, no error). A counter that
// went back (its source was reset) starts over from r with an error. A
// window whose timing is too uncertain gives ErrUncertainTiming.
func (m *Meter) Next(r Reading) (rate Rate, ok bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	start, had := m.start, m.has
	if !had {
		m.start, m.has = r, true
		return Rate{}, false, nil
	}
	if r.Value < start.Value {
		m.start = r
		return Rate{}, false, fmt.Errorf("counter went back from %v to %v; measuring from here", start.Value, r.Value)
	}
	length := r.At().Sub(start.At())
	longest := r.After.Sub(start.Before)
	uncertain := r.Width() + start.Width()
	if length <= 0 || float64(uncertain) > MaxTimingError*float64(length) {
		if r.Width() < start.Width() {
			m.start = r // the better-timed reading starts the next window; this one is lost
			m.skipped++
		} else {
			m.merged++ // the next window covers this one
		}
		return Rate{}, false, fmt.Errorf("%w: %s of a %s window", ErrUncertainTiming, uncertain, length)
	}
	m.start = r
	d := r.Value - start.Value
	return Rate{PerSecond: d / length.Seconds(), Least: d / longest.Seconds(), Window: length, Longest: longest}, true, nil
}
