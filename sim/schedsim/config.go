package schedsim

import (
	"fmt"
	"math"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/placer/jobtype"
)

// Policy is a scheduling policy.
type Policy string

const (
	Stock   Policy = "stock"
	PT      Policy = "pt"
	History Policy = "h"
)

// Scaling turns a utilisation u (percent) into a higher or lower one, as
// the paper sweeps load: linear multiplies and saturates at 100; root takes
// the n-th root of u/100, which moves low values most.
type Scaling string

const (
	Linear Scaling = "linear"
	Root   Scaling = "root"
)

// Scale applies s with factor f (1 leaves u as it is). A root factor below
// 1 raises u/100 to the power 1/f, lowering it.
func Scale(s Scaling, f, u float64) float64 {
	if math.IsNaN(u) {
		return u
	}
	switch s {
	case Root:
		return 100 * math.Pow(math.Max(0, u)/100, 1/f)
	default:
		return math.Min(100, math.Max(0, u*f))
	}
}

// Placement is how a scheduler picks a server for a container among those
// with room.
type Placement string

const (
	// Proportional picks a server with probability proportional to its
	// available resources: RM-H's rule (Section 5, "RM-H schedules a
	// container to a heartbeating server of the correct class with a
	// probability proportional to the server's available resources"), used
	// for unlabelled requests too, as YARN's heartbeat fill.
	Proportional Placement = "proportional"
	// Binpack2 is Nomad's batch scheduler: two feasible servers drawn at
	// random (power of two choices) and the fuller one taken (binpack).
	Binpack2 Placement = "binpack2"
)

// Heartbeat is YARN's default placement (L220 "RM-H selects destination
// servers using its default policy"): nodes offer their room as their
// heartbeats come in, in a fixed order, and each is filled with what it can
// take before the next. A placement for unlabelled requests only
// (Config.Unlabelled).
const Heartbeat Placement = "heartbeat"

// RoomRule is how Algorithm 1 (line 8) counts a class's room for a job.
type RoomRule string

const (
	// RoomPaper is the paper's headroom (L150-153): 1 - max(level, current)
	// of each server, with nothing taken off (classify.PaperRoom).
	RoomPaper RoomRule = "paper"
	// RoomReserve is what the driver would admit at that level: the server
	// less the rounded level, the reserve (and margin) and the harvested
	// work already there (classify.ServerRoom): Harvest's departure, which
	// the live placer uses.
	RoomReserve RoomRule = "reserve"
)

// LostWork is what a killed container takes with it.
type LostWork string

const (
	// LostContainer: the work of every task the container ran (their
	// outputs lived in it), queued again in the job's current stage.
	LostContainer LostWork = "container"
	// LostTask: only the running task's work.
	LostTask LostWork = "task"
	// LostNothing: the running task goes on elsewhere from where it was
	// killed, as if it checkpointed. Not a model of any system: the bound on
	// what any placement can gain by avoiding lost work, since under it a
	// kill costs only the wait for a new container.
	LostNothing LostWork = "none"
)

// Tenant is one primary tenant: its servers and its utilisation (percent of
// a server, 2-minute slots) over the history window followed by the span.
type Tenant struct {
	ID      string
	Servers int
	// Series holds NaN where nothing was measured: before its first sample
	// the tenant has not joined the cluster yet (its servers take nothing).
	Series history.Series
}

// firstSample is the index of a series' first number (len when none).
func firstSample(v []float64) int {
	for i, x := range v {
		if !math.IsNaN(x) {
			return i
		}
	}
	return len(v)
}

// Config says what to simulate. Presets (Paper, Production) fill every
// field with a value and the source it comes from; a zero field falls back
// to the paper's value.
type Config struct {
	// Source names where the tenants come from (a profile, a trace); it is
	// copied to the result.
	Source  string
	Seed    uint64
	Policy  Policy
	Tenants []Tenant
	// HistoryDays of each series come before the simulated span; H
	// classifies them.
	HistoryDays int
	Span        time.Duration // simulated time after the history
	Scaling     Scaling
	Factor      float64 // utilisation scaling factor
	Cores       int     // per server
	Reserve     float64 // cores kept free for the primary tenant
	// AdmitMargin is asked for on top of the reserve when a container
	// starts (the driver's guard.Hysteresis.AdmitMargin; YARN-PT has none).
	AdmitMargin float64
	Placement   Placement
	// Unlabelled is the placement of requests that name no class (every
	// request under stock and PT, H's jobs Algorithm 1 fits nowhere); ""
	// places them as Placement.
	Unlabelled Placement
	// Room is how Algorithm 1 counts a class's room ("": RoomReserve).
	Room RoomRule
	// TypeByClass types every job by its class in the mix (the oracle bound
	// of perfect typing), not by its last duration (L3, L140): never a
	// preset's value.
	TypeByClass bool
	// ContainerReuse: a container that finishes a task runs its job's next
	// ready task (Tez), or waits IdleRelease for one before it is released;
	// without it every task is a container of its own (a Nomad allocation).
	ContainerReuse bool
	IdleRelease    time.Duration
	// StartDelay is how long a container holds its allocation before its
	// task runs (a Nomad allocation's own start: the testbed measures it);
	// zero in every preset.
	StartDelay time.Duration
	// StageDelay is how long a job waits between a stage's last task's end
	// and its next stage's release (on Nomad the stage sequencer seeing the
	// end and the next stage job's registration, evaluation and placement:
	// the testbed measures it); zero in every preset.
	StageDelay time.Duration
	LostWork   LostWork
	// ClassConstraint makes Algorithm 1's classes a constraint (a node
	// label, as Tez-H names it); without it they are a preference and a
	// container goes anywhere when its classes have no room.
	ClassConstraint bool
	// HoldUnfit holds a job that fits no class until one fits, retrying
	// every slot; the paper runs it at once under the default policy.
	HoldUnfit bool
	// Jobs: Poisson arrivals at JobsPerHour. JobScale multiplies every
	// task's length and every stage's width (the paper's simulator "multiply
	// their lengths and container usage by a scaling factor"); zero derives
	// it so that the jobs' work fills OfferedLoad of all cores. With
	// JobsPerHour zero, OfferedLoad sets the rate instead.
	JobsPerHour float64
	JobScale    float64
	OfferedLoad float64
	Mix         Mix
	// Arrivals, if set, are the jobs' arrival times (seconds into the span)
	// instead of a Poisson process: for hand-checked scenarios.
	Arrivals []float64
	// Thresholds type jobs short/medium/long for H; zero: split from the
	// workload and the classes' capacity (jobtype.Split, Section 4.1).
	Thresholds jobtype.Thresholds
	// SurvivalLengths are the task lengths the survival figures are
	// predicted and observed for (default DefaultSurvivalLengths).
	SurvivalLengths []time.Duration
	// Progress, if set, is called with the share of the span simulated.
	Progress func(done float64)
}

func (c *Config) defaults() error {
	p := Paper()
	if c.Span == 0 {
		c.Span = p.Span
	}
	if c.Factor == 0 {
		c.Factor = 1
	}
	if c.Scaling == "" {
		c.Scaling = Linear
	}
	if c.Cores == 0 {
		c.Cores = p.Cores
	}
	if c.Reserve == 0 {
		c.Reserve = p.Reserve
	}
	if c.Placement == "" {
		c.Placement = p.Placement
	}
	if c.LostWork == "" {
		c.LostWork = p.LostWork
	}
	if c.OfferedLoad == 0 && c.JobsPerHour == 0 {
		c.OfferedLoad = p.OfferedLoad
	}
	if c.Mix.Classes == nil && c.Mix.Trace == nil {
		c.Mix = TPCDSMix()
	}
	if len(c.SurvivalLengths) == 0 {
		c.SurvivalLengths = DefaultSurvivalLengths()
	}
	switch c.Policy {
	case Stock, PT, History:
	default:
		return fmt.Errorf("schedsim: unknown policy %q (stock, pt or h)", c.Policy)
	}
	switch c.Placement {
	case Proportional, Binpack2:
	default:
		return fmt.Errorf("schedsim: unknown placement %q (proportional or binpack2)", c.Placement)
	}
	if c.Unlabelled == "" {
		c.Unlabelled = c.Placement
	}
	switch c.Unlabelled {
	case Proportional, Binpack2, Heartbeat:
	default:
		return fmt.Errorf("schedsim: unknown placement for unlabelled requests %q (proportional, binpack2 or heartbeat)", c.Unlabelled)
	}
	if c.Room == "" {
		c.Room = RoomReserve
	}
	if c.Room != RoomPaper && c.Room != RoomReserve {
		return fmt.Errorf("schedsim: unknown room rule %q (paper or reserve)", c.Room)
	}
	switch c.LostWork {
	case LostContainer, LostTask, LostNothing:
	default:
		return fmt.Errorf("schedsim: unknown lost work %q (container, task or none)", c.LostWork)
	}
	if c.Factor <= 0 || c.Reserve < 0 || c.AdmitMargin < 0 || c.JobScale < 0 || c.OfferedLoad < 0 || c.JobsPerHour < 0 || c.StartDelay < 0 || c.StageDelay < 0 {
		return fmt.Errorf("schedsim: factor, reserve, margin, job scale, load, rate and delays must not be negative (factor above 0)")
	}
	if len(c.Tenants) == 0 {
		return fmt.Errorf("schedsim: no tenants")
	}
	need := c.HistoryDays*history.SlotsPerDay + int(c.Span/history.Slot)
	for _, t := range c.Tenants {
		if len(t.Series.Values) < need {
			return fmt.Errorf("schedsim: tenant %s has %d slots, the history and span need %d", t.ID, len(t.Series.Values), need)
		}
	}
	return nil
}

// FromDatacenter takes servers servers from a generated datacenter, tenant
// by tenant; when it has fewer, tenants' series are used again as new
// tenants (suffixed #N so every tenant stays distinct).
func FromDatacenter(dc synth.Datacenter, servers int) []Tenant {
	var out []Tenant
	for i, left := 0, servers; left > 0 && len(dc.Tenants) > 0; i = (i + 1) % len(dc.Tenants) {
		t := dc.Tenants[i]
		n := min(left, len(t.Nodes))
		out = append(out, Tenant{ID: fmt.Sprintf("%s#%d", t.ID, len(out)), Servers: n, Series: t.Series})
		left -= n
	}
	return out
}

// FromSeries makes tenants of servers servers in all from series of any
// source (a long CSV, say), shared out evenly in tenant order.
func FromSeries(ids []string, series []history.Series, servers int) []Tenant {
	if len(ids) == 0 {
		return nil
	}
	out := make([]Tenant, len(ids))
	for i := range ids {
		n := servers / len(ids)
		if i < servers%len(ids) {
			n++
		}
		out[i] = Tenant{ID: ids[i], Servers: max(1, n), Series: series[i]}
	}
	return out
}
