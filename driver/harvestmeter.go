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
	"sync"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
)

// cpuMeter rates a cumulative CPU counter (seconds) over the time since its
// previous reading.
type cpuMeter struct {
	mu   sync.Mutex
	last float64
	at   time.Time
	ok   bool // last and at are a reading
}

// rate takes a reading (readable false: none could be taken) and returns
// the cores used since the previous one, if both were readings and the
// counter did not go back.
func (m *cpuMeter) rate(seconds float64, readable bool, now time.Time) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !readable || math.IsNaN(seconds) {
		m.ok = false
		return 0, false
	}
	prev, prevAt, had := m.last, m.at, m.ok
	m.last, m.at, m.ok = seconds, now, true
	if !had || !now.After(prevAt) || seconds < prev {
		return 0, false
	}
	return (seconds - prev) / now.Sub(prevAt).Seconds(), true
}

// harvestedOver is stats (the executors' last) with the CPU measured over
// m's window from the harvest cgroup's counter, where there is one.
func (d *Driver) harvestedOver(m *cpuMeter, now time.Time, stats guard.Resources) guard.Resources {
	cg := d.harvestCgroup()
	if cg == nil {
		return stats
	}
	st, err := cg.Stats()
	if cpu, ok := m.rate(st.CPUSeconds, err == nil, now); ok {
		stats.CPU = cpu
	}
	return stats
}
