// Package usage owns where the harvest driver learns the primary tenant's
// use: the whole host from /proc (the production default: primary = host -
// harvested tasks) or the primary tenant's own cgroup with a configured
// capacity (what makes a one-machine test cluster honest, where every
// client shares the host). The interface is small so that a go-plugin
// source can stand in for either.
package usage

import (
	"fmt"
	"math"

	"github.com/harvest-platform/harvest/driver/guard"
)

// Source measures the primary tenant.
type Source interface {
	// Name says which source this is ("proc", "cgroup").
	Name() string
	// Capacity is what the node has for the primary tenant and harvested
	// tasks together.
	Capacity() guard.Resources
	// Primary returns the primary tenant's use now (not rounded). harvested
	// is what the harvested tasks use now; a source that sees the whole host
	// subtracts it, one that sees the primary alone ignores it.
	Primary(harvested guard.Resources) (guard.Resources, error)
}

// Peeker is a source that can also be read between the guard's ticks, at
// the cost of a file read or two, so that the driver's spike check sees a
// CPU spike before the next tick (driver/spike.go). PeekCPU is the primary
// tenant's CPU (cores) since the previous PeekCPU, on counters of its own:
// it does not move the window Primary measures. harvestedCPU gives what the
// harvested tasks used over the same window; a source that sees the whole
// host calls it and subtracts it, one that sees the primary alone never
// calls it (so nothing measures them for nothing, 20 times a second). An
// error wrapping usagesource.ErrUncertainTiming says this peek's window was
// too uncertain to rate; the next peek covers it.
type Peeker interface {
	PeekCPU(harvestedCPU func() float64) (Peek, error)
}

// Peek is one spike-check window: Cores the best estimate of the primary's
// CPU, Least the lowest its readings allow (the counter's rise over the
// longest the window may have lasted). A spike is acted on only from Least.
type Peek struct {
	Cores, Least float64
}

// Check says whether a measurement is one the guard can use: neither value
// NaN, infinite or negative.
func Check(r guard.Resources) error {
	for _, v := range []float64{r.CPU, r.MemoryMiB} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("invalid measurement of the primary tenant: %v cores, %v MiB", r.CPU, r.MemoryMiB)
		}
	}
	return nil
}
