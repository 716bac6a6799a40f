package guard

import (
	"strings"
	"testing"
	"time"
)

func TestCPUCapIsCapacityLessRoundedPrimaryLessReserve(t *testing.T) {
	for _, c := range []struct {
		primary, reserve, want float64
	}{
		{0, 0.5, 1.5},   // idle primary: everything but the reserve
		{0.4, 0.5, 0.5}, // 0.4 rounds up to 1
		{1.0, 0.5, 0.5}, // whole cores stay
		{1.2, 0.5, 0},   // rounded 2: nothing is left
		{3, 0.5, 0},     // above capacity: never below 0
		{0, 0, 2},
	} {
		s := State{Capacity: Resources{2, 4096}, Reserve: Resources{CPU: c.reserve}, Primary: Resources{CPU: c.primary}}
		if got := CPUCap(s); got != c.want {
			t.Errorf("primary %.1f reserve %.1f: cap %.2f, want %.2f", c.primary, c.reserve, got, c.want)
		}
	}
}

// One guard over a sequence of ticks: each row is a tick's observation and
// what the plan must say.
func TestSuppressionThenEvictionAfterTheGrace(t *testing.T) {
	tasks := []Task{task("old", 300, 0.25, 32), task("mid", 100, 0.25, 32), task("young", 10, 0.25, 32)}
	base := State{Capacity: Resources{2, 4096}, Reserve: Resources{0.5, 512}, Tasks: tasks}
	g := &Guard{Policy: Policy{Grace: 500 * time.Millisecond, ProgressShare: 1, StaleAfter: 3 * time.Second}}
	for i, c := range []struct {
		at         time.Duration // since t0
		primary    Resources
		age        time.Duration
		cap, need  float64
		suppressed bool
		evict      string
		reason     Reason
	}{
		{0, Resources{0, 100}, 0, 1.5, 0.75, false, "", ""},
		// a spike: rounded 1 core leaves 0.5 < 0.75: suppressed at once, nobody evicted yet
		{200 * time.Millisecond, Resources{0.6, 100}, 0, 0.5, 0.75, true, "", ""},
		{400 * time.Millisecond, Resources{0.6, 100}, 0, 0.5, 0.75, true, "", ""},
		// the grace is over: the youngest goes, 0.5 left fits under 0.5
		{700 * time.Millisecond, Resources{0.6, 100}, 0, 0.5, 0.75, true, "young", ReasonCPU},
	} {
		in := Input{State: base, Now: t0.Add(c.at), Age: c.age}
		in.Primary = c.primary
		p := g.Step(in)
		var got []Task
		for _, e := range p.Evict {
			got = append(got, e.Task)
			if e.Reason != c.reason {
				t.Errorf("tick %d: reason %s, want %s", i, e.Reason, c.reason)
			}
		}
		if p.Cap != c.cap || p.Need != c.need || p.Suppressed != c.suppressed || ids(got) != c.evict {
			t.Errorf("tick %d: cap %.2f need %.2f suppressed %v evict %q; want %.2f %.2f %v %q",
				i, p.Cap, p.Need, p.Suppressed, ids(got), c.cap, c.need, c.suppressed, c.evict)
		}
	}
	// the evicted task is gone: 0.5 fits under the cap, suppression is over
	base.Tasks = tasks[:2]
	in := Input{State: base, Now: t0.Add(900 * time.Millisecond)}
	in.Primary = Resources{0.6, 100}
	if p := g.Step(in); p.Suppressed || len(p.Evict) != 0 {
		t.Fatalf("after the eviction: %+v", p)
	}
}

// Spikes shorter than the grace, apart by at least the grace, only
// suppress, each in a suppression of its own.
func TestShortSpikesOnlySuppress(t *testing.T) {
	s := State{Capacity: Resources{2, 4096}, Reserve: Resources{0.5, 0}, Tasks: []Task{task("a", 10, 0.5, 0), task("b", 5, 0.5, 0)}}
	g := &Guard{Policy: Policy{Grace: time.Second, ProgressShare: 1}}
	step := func(ms int, cpu float64) Plan {
		in := Input{State: s, Now: t0.Add(time.Duration(ms) * time.Millisecond)}
		in.Primary = Resources{CPU: cpu}
		return g.Step(in)
	}
	var starts []time.Time
	for ms := 0; ms < 8000; ms += 100 {
		cpu := 0.0
		if ms%1600 >= 1200 { // 400 ms on, 1200 ms off
			cpu = 0.9
		}
		p := step(ms, cpu)
		if len(p.Evict) != 0 {
			t.Fatalf("%d ms: a spike shorter than the grace evicted %v", ms, p.Evict)
		}
		if p.Suppressed != (cpu > 0) {
			t.Fatalf("%d ms: suppressed %v with the primary at %.1f", ms, p.Suppressed, cpu)
		}
		if p.Suppressed && (len(starts) == 0 || !starts[len(starts)-1].Equal(p.Since)) {
			starts = append(starts, p.Since)
		}
	}
	if len(starts) != 5 {
		t.Fatalf("%d suppressions began (%v), want one per spike", len(starts), starts)
	}
}

// A primary hovering at a core boundary (rounded up on some ticks only)
// keeps one suppression going: the grace runs across the dips, and the
// youngest is evicted once it is over.
func TestHoveringPrimaryIsEvictedAfterTheGrace(t *testing.T) {
	s := State{Capacity: Resources{2, 4096}, Reserve: Resources{0.5, 0}, Tasks: []Task{task("old", 10, 0.25, 0), task("young", 5, 0.25, 0)}}
	g := &Guard{Policy: Policy{Grace: 500 * time.Millisecond, ProgressShare: 1}}
	var since time.Time
	for i, cpu := range []float64{1.1, 0.95, 1.05, 0.98, 1.2, 0.9} { // ticks 200 ms apart
		in := Input{State: s, Now: t0.Add(time.Duration(i) * 200 * time.Millisecond)}
		in.Primary = Resources{CPU: cpu}
		p := g.Step(in)
		if p.Suppressed && since.IsZero() {
			since = p.Since
		}
		if p.Suppressed && !p.Since.Equal(since) {
			t.Fatalf("tick %d: a new suppression began at a dip", i)
		}
		if i < 4 && len(p.Evict) != 0 {
			t.Fatalf("tick %d: evicted within the grace", i)
		}
		if i == 4 {
			if len(p.Evict) != 2 || p.Evict[0].ID != "young" {
				t.Fatalf("tick 4 (800 ms into the suppression): evicted %v, want both (cap 0)", p.Evict)
			}
			return
		}
	}
}

func TestProgressShareLowersTheNeed(t *testing.T) {
	s := State{Capacity: Resources{2, 4096}, Reserve: Resources{0.5, 0}, Primary: Resources{CPU: 0.5},
		Tasks: []Task{task("a", 10, 0.5, 0), task("b", 5, 0.5, 0)}} // cap 0.5, allocated 1
	for _, c := range []struct {
		share      float64
		suppressed bool
		evicted    int
	}{{1, true, 1}, {0.5, false, 0}, {0.25, false, 0}} {
		g := &Guard{Policy: Policy{ProgressShare: c.share}}
		p := g.Step(Input{State: s, Now: t0})
		if p.Suppressed != c.suppressed || len(p.Evict) != c.evicted {
			t.Errorf("share %.2f: suppressed %v evicted %d; want %v %d", c.share, p.Suppressed, len(p.Evict), c.suppressed, c.evicted)
		}
	}
}

func TestMemoryEvictsAtOnceWhateverTheGrace(t *testing.T) {
	s := State{Capacity: Resources{8, 4096}, Reserve: Resources{0, 1024}, Primary: Resources{0, 2500},
		Tasks: []Task{task("old", 100, 0.1, 300), task("young", 10, 0.1, 300)}} // free 4096-2500-600 = 996 < 1024
	g := &Guard{Policy: Policy{Grace: time.Hour, ProgressShare: 1}}
	p := g.Step(Input{State: s, Now: t0})
	if len(p.Evict) != 1 || p.Evict[0].ID != "young" || p.Evict[0].Reason != ReasonMemory || p.Suppressed {
		t.Fatalf("plan %+v, want young evicted for memory at once", p)
	}
	if m := p.EvictionMessage(ReasonMemory, 0); !strings.HasPrefix(m, "evicted: primary tenant needs 0 cores and 2500 MiB") || !strings.Contains(m, "short by 28 MiB") {
		t.Fatalf("message %q", m)
	}
}

func TestStaleMeasurementFailsSafe(t *testing.T) {
	s := State{Capacity: Resources{2, 4096}, Reserve: Resources{0.5, 0}, Tasks: []Task{task("a", 10, 0.25, 0), task("b", 5, 0.25, 0)}}
	g := &Guard{Policy: Policy{Grace: time.Second, ProgressShare: 1, StaleAfter: 3 * time.Second}}
	if p := g.Step(Input{State: s, Now: t0, Age: 3 * time.Second}); p.Stale || len(p.Evict) != 0 || p.Cap != 1.5 {
		t.Fatalf("at the window's edge: %+v", p)
	}
	p := g.Step(Input{State: s, Now: t0, Age: 3*time.Second + time.Millisecond})
	if !p.Stale || p.Cap != 0 || ids(evicted(p)) != "b,a" || p.Evict[0].Reason != ReasonStale {
		t.Fatalf("past the window: %+v", p)
	}
	if m := p.EvictionMessage(ReasonStale, 0); !strings.HasPrefix(m, "evicted: the primary tenant has not been measured for 3.001s") {
		t.Fatalf("message %q", m)
	}
	// measured again: harvesting resumes
	if p := g.Step(Input{State: s, Now: t0.Add(time.Second)}); p.Stale || p.Cap != 1.5 || len(p.Evict) != 0 {
		t.Fatalf("after recovery: %+v", p)
	}
	// StaleAfter 0 never fails safe
	g.Policy.StaleAfter = 0
	if p := g.Step(Input{State: s, Now: t0, Age: time.Hour}); p.Stale {
		t.Fatal("StaleAfter 0 failed safe")
	}
}

func evicted(p Plan) []Task {
	var out []Task
	for _, e := range p.Evict {
		out = append(out, e.Task)
	}
	return out
}

// With the cap enforced as whole CPUs (a cpuset), the plan's cap is what
// the cgroup can hold: a cap of one CPU or more rounds down, below one it
// stays (the tasks keep one CPU but are suppressed), so the need is
// compared with the cap in force.
func TestWholeCPUsCapIsTheCapInForce(t *testing.T) {
	tasks := []Task{task("a", 100, 0.6, 32), task("b", 10, 0.6, 32)}
	for _, c := range []struct {
		primary, cap float64
		suppressed   bool
	}{
		{0, 1, true},     // 2 - 0 - 0.5 = 1.5: one CPU, below the 1.2 the tasks need
		{0.6, 0.5, true}, // 2 - 1 - 0.5 = 0.5: one CPU, suppressed
		{1.2, 0, true},   // nothing left
	} {
		g := &Guard{Policy: Policy{Grace: time.Hour, ProgressShare: 1, WholeCPUs: true}}
		in := Input{State: State{Capacity: Resources{2, 4096}, Reserve: Resources{0.5, 0}, Primary: Resources{CPU: c.primary}, Tasks: tasks}, Now: t0}
		if p := g.Step(in); p.Cap != c.cap || p.Suppressed != c.suppressed {
			t.Errorf("primary %.1f: cap %.2f suppressed %v, want %.2f %v", c.primary, p.Cap, p.Suppressed, c.cap, c.suppressed)
		}
	}
	p := Policy{WholeCPUs: true}
	for cap, want := range map[float64]float64{2.999: 2, 3: 3, 1: 1, 0.999: 0.999, 0: 0} {
		if got := p.Enforced(cap); got != want {
			t.Errorf("Enforced(%v) = %v, want %v", cap, got, want)
		}
	}
	if got := (Policy{}).Enforced(1.5); got != 1.5 {
		t.Errorf("a quota cap rounded: %v", got)
	}
}

// TestIdleReserveIsLentUntilThePrimaryUsesACore: with LendIdleReserve the
// cap is the whole capacity while the primary rounds up to no core, and the
// reserve is back in the cap as soon as it uses any; without it, never
// lent. Stale measurements lend nothing.
func TestIdleReserveIsLentUntilThePrimaryUsesACore(t *testing.T) {
	base := State{Capacity: Resources{4, 4096}, Reserve: Resources{1, 512},
		Tasks: []Task{task("a", 10, 1, 32)}}
	for _, c := range []struct {
		lend, whole bool
		primary     float64
		age         time.Duration
		cap         float64
		lent        bool
	}{
		{true, false, 0, 0, 4, true},
		{true, false, 1e-12, 0, 4, true},             // a measurement's rounding error is no core
		{true, false, 0.001, 0, 2, false},            // any use rounds up to a core: the reserve is kept
		{true, false, 1.5, 0, 1, false},              // 4 - 2 - 1
		{true, true, 0, 0, 4, true},                  // whole CPUs: all of them
		{false, false, 0, 0, 3, false},               // not lending: capacity - reserve
		{true, false, 0, 10 * time.Second, 0, false}, // stale: nothing, however idle the last measurement
	} {
		g := &Guard{Policy: Policy{ProgressShare: 1, StaleAfter: 3 * time.Second, LendIdleReserve: c.lend, WholeCPUs: c.whole}}
		in := Input{State: base, Now: t0, Age: c.age}
		in.Primary = Resources{CPU: c.primary, MemoryMiB: 100}
		p := g.Step(in)
		if p.Cap != c.cap || p.Lent != c.lent || len(p.Evict) != map[bool]int{true: 1, false: 0}[c.age > 0] {
			t.Errorf("lend %v whole %v primary %g age %s: cap %.2f lent %v evict %d; want %.2f %v",
				c.lend, c.whole, c.primary, c.age, p.Cap, p.Lent, len(p.Evict), c.cap, c.lent)
		}
	}
}

// A reading that jumps for one tick just as the grace ends (noise at a core
// boundary, a thread's catch-up burst) does not choose how many go: the
// youngest is evicted for the shortfall that lasted the whole grace, and a
// deeper shortfall that lasts starts a grace of its own.
func TestEvictionFollowsTheShortfallThatLastedTheGrace(t *testing.T) {
	tasks := []Task{task("old", 300, 0.25, 0), task("mid", 100, 0.25, 0), task("young", 10, 0.25, 0)}
	s := State{Capacity: Resources{2, 4096}, Reserve: Resources{0.5, 0}, Tasks: tasks}
	g := &Guard{Policy: Policy{Grace: 500 * time.Millisecond, ProgressShare: 1}}
	step := func(ms int, cpu float64) Plan {
		in := Input{State: s, Now: t0.Add(time.Duration(ms) * time.Millisecond)}
		in.Primary = Resources{CPU: cpu}
		return g.Step(in)
	}
	step(0, 0.6)   // cap 0.5 < 0.75: suppressed
	step(200, 0.6) // still
	p := step(600, 1.05)
	if ids(evicted(p)) != "young" || p.Cap != 0 || p.Sustained != 0.5 {
		t.Fatalf("a 2-core reading at the grace's end: cap %.2f, evicted %q for %.2f; want the youngest alone, for the 0.5 that lasted",
			p.Cap, ids(evicted(p)), p.Sustained)
	}
	s.Tasks = tasks[:2]
	// a real rise to 2 cores that lasts: a grace of its own, then the rest
	if p := step(800, 1.5); len(p.Evict) != 0 || !p.Suppressed {
		t.Fatalf("a new shortfall evicted at once: %+v", p)
	}
	if p := step(1400, 1.5); ids(evicted(p)) != "mid,old" {
		t.Fatalf("after its own grace: evicted %q, want mid and old", ids(evicted(p)))
	}
}
