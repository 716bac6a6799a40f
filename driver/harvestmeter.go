package driver

// The harvested tasks' CPU over the guard's own windows. A host-wide usage
// source (usage_source = "proc", the production default) measures the
// primary as the host's busy CPU less the harvested tasks'. Their
// executors' stats are a second old or more, and when the primary spikes
// it is exactly the harvested tasks' CPU that it takes: the host stays as
// busy as before, and host - stale harvested would hide the spike until the
// stats caught up. So where the harvest cgroup exists, the harvested CPU
// subtracted is its own counter's rate over the same window as the host's
// (one for the ticks, one for the spike check's peeks); the executors'
// stats stand in only while the counter cannot be read.

import (
	"math"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// harvestedOver is stats (the executors' last) with the CPU measured over
// m's window from the harvest cgroup's counter, read between two clock
// readings, where there is one and the window's timing is known well enough.
func (d *Driver) harvestedOver(m *usagesource.Meter, stats guard.Resources) guard.Resources {
	cg := d.harvestCgroup()
	if cg == nil {
		return stats
	}
	var st harvestcg.Stats
	r, err := usagesource.ReadCounter(d.clock, func() (float64, error) {
		var err error
		st, err = cg.Stats()
		return st.CPUSeconds, err
	})
	if err != nil || math.IsNaN(r.Value) {
		m.Reset()
		return stats
	}
	if rate, ok, _ := m.Next(r); ok {
		stats.CPU = rate.PerSecond
	}
	return stats
}
