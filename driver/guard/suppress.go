package guard

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/contract"
)

// Suppression before eviction. The paper's node manager only kills
// (history-based-harvesting.txt:212-213: round the primary up, and when the
// reserve is short "kill enough containers from youngest to oldest"). The
// driver first squeezes: every tick it caps the harvested tasks' total CPU
// (a CFS quota on their parent cgroup) at
//
//	cap = capacity - rounded primary - reserve      (never below 0)
//
// (in whole CPUs at 1 or more when the cgroup enforces it as a cpuset:
// Policy.WholeCPUs), so a CPU spike of the primary tenant is absorbed
// within one tick, and it
// evicts youngest first only when the cap has stayed below what the tasks
// need to make progress (ProgressShare of their CPU allocations) for longer
// than Grace (dips back above the need shorter than Grace do not end the
// suppression). Memory cannot be squeezed back from a process, so a memory
// shortfall evicts at once, as before. When the primary tenant has not been
// measured for longer than StaleAfter the guard cannot know what it needs:
// it fails safe, capping the tasks to nothing and evicting them all.
//
// Lending the reserve (beyond the paper; Policy.LendIdleReserve): while the
// primary tenant rounds up to no core at all, it has nothing the reserve
// would protect from the harvested tasks, so the cap is the whole capacity.
// Its first thread to wake takes a CPU from the harvested tasks at once
// (they are SCHED_IDLE, or at the lowest weight), and the rounded primary
// is then a core or more: the spike check's next two peeks, or the next
// tick, take the reserve back.

// Reason is why the guard suppressed or evicted; metrics carry it as a label.
type Reason string

// The reasons.
const (
	ReasonCPU    Reason = "cpu"    // the primary tenant's CPU: the cap is below the tasks' need
	ReasonMemory Reason = "memory" // the primary tenant's memory: the reserve is short
	ReasonStale  Reason = "stale"  // the primary tenant is unmeasured (fail-safe)
)

// Policy configures suppression, eviction and the fail-safe.
type Policy struct {
	// Grace is how long the cap may stay below the tasks' need before the
	// youngest are evicted (0: at once).
	Grace time.Duration
	// ProgressShare is the share of its CPU allocation a task needs to make
	// progress, in (0, 1]: 1 evicts when the tasks cannot even get what Nomad
	// allocated them.
	ProgressShare float64
	// StaleAfter is how old the last good measurement may be before the
	// guard fails safe (0: never).
	StaleAfter time.Duration
	// WholeCPUs: the cap is enforced as whole CPUs from one CPU up (a
	// cpuset), so a cap of 1 or more is rounded down to a whole number.
	WholeCPUs bool
	// LendIdleReserve: while the rounded primary is 0 cores, the CPU reserve
	// is lent to the harvested tasks (the cap is the whole capacity).
	LendIdleReserve bool
}

// Enforced is the cap as it can be enforced: cap, or with WholeCPUs and a
// cap of one CPU or more, the whole CPUs in it.
func (p Policy) Enforced(cap float64) float64 {
	if p.WholeCPUs && cap >= 1-1e-9 {
		return math.Floor(cap + 1e-9)
	}
	return cap
}

// CPUCap is what the harvested tasks may use together now: capacity -
// rounded primary - reserve, in cores, never below 0.
func CPUCap(s State) float64 {
	return math.Max(0, s.Capacity.CPU-RoundUp(s.Primary).CPU-s.Reserve.CPU)
}

// Need is the CPU tasks need to make progress: ProgressShare of their
// allocations.
func (p Policy) Need(tasks []Task) float64 {
	sum := 0.0
	for _, t := range tasks {
		sum += t.Alloc.CPU
	}
	return p.ProgressShare * sum
}

// Input is one tick's observation.
type Input struct {
	State
	Now time.Time
	// Age is how long ago the primary tenant was last measured well; State's
	// Primary is that measurement.
	Age time.Duration
}

// Eviction is a task to kill and why.
type Eviction struct {
	Task
	Reason Reason
}

// Plan is what the guard decided for one tick.
type Plan struct {
	Cap        float64    // cores the harvested tasks may use together now
	Need       float64    // cores the running tasks need to progress (before evictions)
	Suppressed bool       // Cap < Need: the tasks are squeezed below what they need
	Since      time.Time  // when the current suppression began (zero when not suppressed)
	Stale      bool       // failing safe: the primary tenant is unmeasured
	Evict      []Eviction // youngest first
	Primary    Resources  // the rounded primary the plan used
	Lent       bool       // the CPU reserve is lent: the primary rounds up to no core
	Shortfall  Resources  // how short the reserve was (memory) and Need - Cap (CPU)
	Sustained  float64    // at a CPU eviction: the highest cap below the need over the grace, which the evictions make room under
	Age        time.Duration
}

// Guard carries what a tick needs from the ticks before it: when the
// current suppression began, and since when the cap has been back above the
// need. A suppression ends only once the cap has stayed at or above the
// need for Grace too, so a primary hovering at a core boundary (a noisy
// measurement rounds up on some ticks and not on others) does not restart
// the grace on every tick it dips below the boundary. It is clock-free:
// callers pass the time. Not safe for concurrent use.
type Guard struct {
	Policy     Policy
	belowSince time.Time // the suppression's start (zero: none)
	aboveSince time.Time // within a suppression, since when the cap has covered the need
	// sustained is the highest cap below the need seen since the
	// suppression began: the shortfall that lasted the whole grace.
	sustained float64
}

// Step decides one tick: the cap, whether the tasks are suppressed, and
// whom to evict.
func (g *Guard) Step(in Input) Plan {
	p := Plan{Primary: RoundUp(in.Primary), Age: in.Age}
	tasks := youngestFirst(in.Tasks)
	if g.Policy.StaleAfter > 0 && in.Age > g.Policy.StaleAfter {
		g.belowSince, g.aboveSince = time.Time{}, time.Time{}
		p.Stale, p.Need = true, g.Policy.Need(tasks)
		p.Suppressed = len(tasks) > 0
		p.Since = in.Now
		for _, t := range tasks {
			p.Evict = append(p.Evict, Eviction{t, ReasonStale})
		}
		return p
	}
	p.Cap = g.Policy.Enforced(CPUCap(in.State))
	if g.Policy.LendIdleReserve && p.Primary.CPU == 0 {
		p.Cap, p.Lent = g.Policy.Enforced(in.Capacity.CPU), true
	}

	// memory: evict at once, youngest first, until the reserve is whole
	if short := in.Shortfall().MemoryMiB; short > 0 {
		p.Shortfall.MemoryMiB = short
		freed := 0.0
		for len(tasks) > 0 && freed < short-1e-9 {
			p.Evict = append(p.Evict, Eviction{tasks[0], ReasonMemory})
			freed += tasks[0].Alloc.MemoryMiB
			tasks = tasks[1:]
		}
	}

	// CPU: suppressed while the cap is below the need; evict after the grace
	p.Need = g.Policy.Need(tasks)
	if p.Cap >= p.Need-1e-9 {
		if !g.belowSince.IsZero() {
			if g.aboveSince.IsZero() {
				g.aboveSince = in.Now
			}
			if in.Now.Sub(g.aboveSince) >= g.Policy.Grace {
				g.belowSince, g.aboveSince = time.Time{}, time.Time{}
			}
		}
		return p
	}
	if g.belowSince.IsZero() {
		g.belowSince, g.sustained = in.Now, p.Cap
	}
	g.aboveSince = time.Time{}
	g.sustained = max(g.sustained, p.Cap)
	p.Suppressed, p.Since, p.Shortfall.CPU = true, g.belowSince, p.Need-p.Cap
	if in.Now.Sub(g.belowSince) < g.Policy.Grace {
		return p
	}
	// Evict for the shortfall that lasted the whole grace: the highest cap
	// below the need seen since the suppression began, not this tick's
	// alone, so one tick's reading at the grace's end (a measurement's
	// noise, a thread's burst) does not choose how many go. The cap itself
	// already follows every tick; a shortfall deeper than the one that
	// lasted starts a suppression, and a grace, of its own.
	p.Sustained = g.sustained
	for len(tasks) > 0 && g.Policy.Need(tasks) > p.Sustained+1e-9 {
		p.Evict = append(p.Evict, Eviction{tasks[0], ReasonCPU})
		tasks = tasks[1:]
	}
	g.belowSince = time.Time{} // what is left fits under the sustained cap
	return p
}

// youngestFirst sorts a copy of tasks youngest first, ties by ID.
func youngestFirst(in []Task) []Task {
	tasks := append([]Task(nil), in...)
	sort.SliceStable(tasks, func(i, j int) bool {
		if !tasks[i].Started.Equal(tasks[j].Started) {
			return tasks[i].Started.After(tasks[j].Started)
		}
		return tasks[i].ID < tasks[j].ID
	})
	return tasks
}

// EvictionMessage is what an evicted task is told, in its task event and
// exit error. Every message starts with contract.EvictionPrefix.
func (p Plan) EvictionMessage(r Reason, grace time.Duration) string {
	switch r {
	case ReasonStale:
		return contract.EvictionPrefix + fmt.Sprintf("the primary tenant has not been measured for %s; harvesting stops until it is measured again",
			p.Age.Round(time.Millisecond))
	case ReasonMemory:
		return contract.EvictionPrefix + fmt.Sprintf("primary tenant needs %.0f cores and %.0f MiB; the memory reserve was short by %.0f MiB",
			p.Primary.CPU, p.Primary.MemoryMiB, p.Shortfall.MemoryMiB)
	}
	return contract.EvictionPrefix + fmt.Sprintf("primary tenant needs %.0f cores and %.0f MiB; harvested tasks were capped at %.2f cores, "+
		"below the %.2f they need to progress, for longer than the %s grace",
		p.Primary.CPU, p.Primary.MemoryMiB, p.Sustained, p.Need, grace)
}

// SuppressionMessage is what each running task is told when a suppression
// begins. Every message starts "suppressed: ".
func (p Plan) SuppressionMessage(grace time.Duration) string {
	if p.Stale {
		return fmt.Sprintf("suppressed: the primary tenant has not been measured for %s; harvested CPU capped to nothing",
			p.Age.Round(time.Millisecond))
	}
	return fmt.Sprintf("suppressed: primary tenant needs %.0f cores; harvested tasks capped at %.2f cores, below the %.2f they need "+
		"to progress; the youngest are evicted if this lasts %s", p.Primary.CPU, p.Cap, p.Need, grace)
}
