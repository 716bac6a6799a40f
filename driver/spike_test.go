package driver

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
)

// peekSource is a fake source the spike check can peek at.
type peekSource struct {
	fakeSource
	peekMu sync.Mutex
	peek   float64
}

func (p *peekSource) PeekCPU(func() float64) (float64, error) {
	p.peekMu.Lock()
	defer p.peekMu.Unlock()
	return p.peek, nil
}

func (p *peekSource) setPeek(cpu float64) {
	p.peekMu.Lock()
	defer p.peekMu.Unlock()
	p.peek = cpu
}

// Two peeks in a row that put the primary above the cores the cap came
// from tick the guard at once with the lesser of them, although the
// average since the last tick still rounds down; one peek does not, and the
// cap comes back only at a regular tick.
func TestSpikeCheckCutsTheCapBeforeTheNextTick(t *testing.T) {
	_, d, fake := newHarness(t) // 4 cores, a 1-core reserve
	src := &peekSource{fakeSource: fakeSource{capacity: fake.capacity}}
	src.set(guard.Resources{CPU: 0.5})
	d.mu.Lock()
	d.source, d.peeker = src, src
	d.mu.Unlock()
	if p := d.guardOnce(time.Now()); p.Cap != 2 {
		t.Fatalf("cap with the primary at 0.5 cores: %v, want 4 - 1 - 1 = 2", p.Cap)
	}
	peeks := func(cpus ...float64) (float64, bool) {
		var cpu float64
		var ok bool
		for _, c := range cpus {
			src.setPeek(c)
			cpu, ok = d.spiked()
		}
		return cpu, ok
	}
	if _, ok := peeks(2.5, 2.5); ok {
		t.Fatal("peeks before the first interval's level is known made a spike")
	}
	peeks(0.5, 0.5, 0.5, 0.5, 0.5, 0.5) // the interval's mean: (2 x 2.5 + 6 x 0.5) / 8 = 1
	d.spike.ticked()
	if _, ok := peeks(2.5); ok {
		t.Fatal("one peek above made a spike")
	}
	if _, ok := peeks(1.4); ok { // a rise of 0.4: the primary at 0.9, within its core: the run starts again
		t.Fatal("a peek within the core made a spike")
	}
	if _, ok := peeks(2.5, 1.2, 2.5); ok {
		t.Fatal("peeks above that are not in a row made a spike")
	}
	cpu, ok := peeks(2.2)
	if !ok || math.Abs(cpu-1.7) > 1e-9 {
		t.Fatalf("two peeks in a row (rises of 1.5 and 1.2 on 0.5): spike %v at %v cores, want one at the lesser, 1.7", ok, cpu)
	}
	p := d.guardTick(time.Now(), cpu) // the source's average is still 0.5
	if p.Cap != 1 || p.Primary.CPU != 2 {
		t.Fatalf("early tick: cap %v from a primary of %v cores (rounded), want 1 from 2", p.Cap, p.Primary.CPU)
	}
	if _, ok := peeks(2.4, 2.5); ok {
		t.Fatal("peeks at the level the cap already came from made another spike")
	}
	if p := d.guardOnce(time.Now()); p.Cap != 2 {
		t.Fatalf("the next regular tick, the average back at 0.5: cap %v, want 2", p.Cap)
	}
	d.spike.ticked()
	if _, ok := peeks(2.5, 2.5); ok {
		t.Fatal("a steady level, however high, made a spike: only a rise counts")
	}
	d.mu.Lock()
	d.peeker = nil
	d.mu.Unlock()
	if _, ok := peeks(4, 4); ok {
		t.Fatal("a source without a peek made a spike")
	}
}

func TestSpikeCheckSetting(t *testing.T) {
	for _, c := range []struct {
		interval, check string
		want            time.Duration
		bad             bool
	}{
		{"200ms", "", 50 * time.Millisecond, false},
		{"200ms", "0", 0, false},
		{"1s", "100ms", 100 * time.Millisecond, false},
		{"80ms", "50ms", 0, false}, // two peeks would take longer than a tick: off
		{"200ms", "5ms", 0, true},
		{"200ms", "-1s", 0, true},
		{"200ms", "soon", 0, true},
	} {
		s, err := parseSettings(Config{GuardInterval: c.interval, SpikeCheck: c.check}, guard.Resources{CPU: 4, MemoryMiB: 4096})
		if (err != nil) != c.bad || (!c.bad && s.spikeCheck != c.want) {
			t.Errorf("guard_interval %s spike_check %q: %v, %v; want %v (error %v)", c.interval, c.check, s.spikeCheck, err, c.want, c.bad)
		}
	}
}
