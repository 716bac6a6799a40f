package driver

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/usage"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// peekSource is a fake source the spike check can peek at.
type peekSource struct {
	fakeSource
	peekMu sync.Mutex
	peek   float64
}

func (p *peekSource) PeekCPU(func() float64) (usage.Peek, error) {
	p.peekMu.Lock()
	defer p.peekMu.Unlock()
	return usage.Peek{Cores: p.peek, Least: p.peek}, nil
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

// timedPeeker is a primary cgroup whose CPU counter grows at a scripted rate,
// read between two readings of a scripted clock, as usage.Cgroup reads it.
type timedPeeker struct {
	fakeSource
	meter  usagesource.Meter
	cpu    float64   // CPU seconds at now
	rate   float64   // cores, from now on
	now    time.Time // when the next peek reads the counter
	lateBy time.Duration
	// old is the window the driver rated before its readings were timed on
	// both sides: counter increase over the time between the clock reads
	// after the counter reads
	oldCPU   float64
	oldAfter time.Time
}

// at moves time on to t at the current rate.
func (p *timedPeeker) at(t time.Time) {
	p.cpu += p.rate * t.Sub(p.now).Seconds()
	p.now = t
}

func (p *timedPeeker) PeekCPU(func() float64) (usage.Peek, error) {
	clock := []time.Time{p.now, p.now.Add(p.lateBy)} // before and after the counter read
	r, _ := usagesource.ReadCounter(func() time.Time { t := clock[0]; clock = clock[1:]; return t },
		func() (float64, error) { return p.cpu, nil })
	p.at(r.After) // the thread was away lateBy after reading the counter
	p.lateBy = 0
	rate, ok, err := p.meter.Next(r)
	if err != nil || !ok {
		return usage.Peek{}, err
	}
	return usage.Peek{Cores: rate.PerSecond, Least: rate.Least}, nil
}

// oldRate is what the untimed reading made of the last peek's window.
func (p *timedPeeker) oldRate(r usagesource.Reading) float64 {
	rate := (r.Value - p.oldCPU) / r.After.Sub(p.oldAfter).Seconds()
	p.oldCPU, p.oldAfter = r.Value, r.After
	return rate
}

// newTimedPeekHarness is the driver with a 0.6-core primary measured by its
// guard ticks and peeked at every 50 ms through a timedPeeker, one tick's
// worth of peeks already seen.
func newTimedPeekHarness(t *testing.T) (*Driver, *timedPeeker) {
	_, d, fake := newHarness(t) // 4 cores, a 1-core reserve
	p := &timedPeeker{fakeSource: fakeSource{capacity: fake.capacity}, rate: 0.6, now: time.Now()}
	p.set(guard.Resources{CPU: 0.6})
	p.meter.Start(usagesource.Reading{Value: 0, Before: p.now, After: p.now})
	p.oldAfter = p.now
	d.mu.Lock()
	d.source, d.peeker = p, p
	d.mu.Unlock()
	d.guardOnce(time.Now())
	for range 20 {
		p.at(p.now.Add(50 * time.Millisecond))
		if _, ok := d.spiked(); ok {
			t.Fatal("a steady 0.6-core primary made a spike")
		}
	}
	d.spike.ticked()
	p.oldCPU, p.oldAfter = p.cpu, p.now
	return d, p
}

// The failure seen on a busy machine ("primary tenant needs 2 cores" for a
// 0.6-core burner): a peek's thread preempted for 60 ms right after its
// counter read, the next peek (its tick already late) for 25 ms, the one
// after on time. Timed by the clock read after each counter read, as the
// driver did, the two windows after the first preemption read 1.44 and 1.6
// cores: two peeks in a row above a core, a spike of 2 cores. Timed on both
// sides of the read, the blurred windows are merged into the next one and
// there is no spike.
func TestTwoWindowsAroundAPreemptionGiveNoSpike(t *testing.T) {
	d, p := newTimedPeekHarness(t)
	t0 := p.now
	var old []float64
	for _, peek := range []struct{ at, late time.Duration }{
		{50 * time.Millisecond, 60 * time.Millisecond},
		{110 * time.Millisecond, 25 * time.Millisecond},
		{150 * time.Millisecond, 0},
		{200 * time.Millisecond, 0},
	} {
		p.at(t0.Add(peek.at))
		p.lateBy = peek.late
		before := p.cpu
		if cpu, ok := d.spiked(); ok {
			t.Fatalf("peek at %s: a spike at %.2f cores from a steady 0.6-core primary around preempted reads", peek.at, cpu)
		}
		old = append(old, p.oldRate(usagesource.Reading{Value: before, After: p.now}))
	}
	if !(old[1] > 1 && old[2] > 1) {
		t.Fatalf("the script is not the failure: the untimed windows read %.2f cores", old)
	}
	if v := gauge(t, d.Metrics(), "harvest_driver_readings_discarded_total", map[string]string{"window": "peek"}); v != 2 {
		t.Fatalf("discarded peeks %v, want the 2 blurred ones", v)
	}
}

// A real rise still makes a spike within two peeks of it, and no sooner
// than two: the least of the two, the whole rise.
func TestARealRiseGivesASpikeWithinTwoPeeks(t *testing.T) {
	d, p := newTimedPeekHarness(t)
	p.rate = 2.6 // the primary jumps by 2 cores
	p.at(p.now.Add(50 * time.Millisecond))
	if _, ok := d.spiked(); ok {
		t.Fatal("one peek made a spike")
	}
	p.at(p.now.Add(50 * time.Millisecond))
	cpu, ok := d.spiked()
	if !ok || math.Abs(cpu-2.6) > 0.01 {
		t.Fatalf("two peeks after a 2-core rise: spike %v at %.3f cores, want one at 2.6", ok, cpu)
	}
}
