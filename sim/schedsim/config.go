package schedsim

import (
	"fmt"
	"math"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
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

// Scaling turns a utilisation u (percent) into a higher one, as the paper
// sweeps load: linear multiplies and saturates at 100; root takes the n-th
// root of u/100, raising low values most.
type Scaling string

const (
	Linear Scaling = "linear"
	Root   Scaling = "root"
)

// Scale applies s with factor f (1 leaves u as it is).
func Scale(s Scaling, f, u float64) float64 {
	if math.IsNaN(u) {
		return u
	}
	switch s {
	case Root:
		return 100 * math.Pow(math.Max(0, u)/100, 1/f)
	default:
		return math.Min(100, u*f)
	}
}

// Tenant is one primary tenant: its servers and its utilisation (percent of
// a server, 2-minute slots) over the history window followed by the month.
type Tenant struct {
	ID      string
	Servers int
	Series  history.Series
}

// Config says what to simulate.
type Config struct {
	Seed    uint64
	Policy  Policy
	Tenants []Tenant
	// HistoryDays of each series come before the simulated span; H
	// classifies them (the paper's placer needs at least a week).
	HistoryDays int
	Span        time.Duration // simulated time after the history, default 30 days
	Scaling     Scaling
	Factor      float64 // scaling factor, default 1
	Cores       int     // per server, default 16
	MemoryMiB   float64 // per server, default 64 GiB
	Reserve     float64 // cores kept free for the primary tenant, default the driver's (guard.DefaultReserveCPU, 33%)
	// JobsPerHour is the Poisson arrival rate; when zero, OfferedLoad (share
	// of all cores the jobs' task-seconds would fill, default 0.1) sets it.
	JobsPerHour float64
	OfferedLoad float64
	Mix         Mix
	// Arrivals, if set, are the jobs' arrival times (seconds into the span)
	// instead of a Poisson process: for hand-checked scenarios.
	Arrivals []float64
	// Thresholds type jobs short/medium/long for H; zero: set from the
	// workload and the classes' capacity (jobtype.Split).
	Thresholds jobtype.Thresholds
	// ClassConstraint (H) makes Algorithm 1's classes a hard constraint, as
	// the admission proxy writes them; by default they are a preference, as
	// a Nomad affinity would be, and a task goes elsewhere when its classes
	// have no room.
	ClassConstraint bool
	// NoHistoryRanking (H) turns off ranking servers by the room the
	// primary's history leaves for the job's type (see sim.safe).
	NoHistoryRanking bool
	// NoMargin drops the driver's default admission margin (one core on top
	// of the reserve, guard.DefaultHysteresis) for PT and H.
	NoMargin bool
	// TaskCores runs every that many one-core tasks of a stage as one
	// container of that many cores (default 1): the paper's simulator scales
	// container usage so that large datacenters simulate quickly.
	TaskCores int
	// Progress, if set, is called with the share of the span simulated.
	Progress func(done float64)

	margin float64 // cores
}

func (c *Config) defaults() error {
	if c.Span == 0 {
		c.Span = 30 * 24 * time.Hour
	}
	if c.Factor == 0 {
		c.Factor = 1
	}
	if c.Scaling == "" {
		c.Scaling = Linear
	}
	if c.Cores == 0 {
		c.Cores = 16
	}
	if c.MemoryMiB == 0 {
		c.MemoryMiB = 64 << 10
	}
	if c.Reserve == 0 {
		c.Reserve, _ = guard.ParseAmount(guard.DefaultReserveCPU, float64(c.Cores))
	}
	c.margin = guard.DefaultHysteresis().AdmitMargin.CPU
	if c.NoMargin {
		c.margin = 0
	}
	if c.TaskCores == 0 {
		c.TaskCores = 1
	}
	if c.OfferedLoad == 0 {
		c.OfferedLoad = 0.1
	}
	if c.Mix.Classes == nil && c.Mix.Trace == nil {
		c.Mix = TPCDSMix()
	}
	switch c.Policy {
	case Stock, PT, History:
	default:
		return fmt.Errorf("schedsim: unknown policy %q (stock, pt or h)", c.Policy)
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
