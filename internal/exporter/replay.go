package exporter

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/internal/replay"
)

// DefaultReplayMemory is a replayed primary tenant's memory unless Replay
// says otherwise: the traces have CPU only.
const DefaultReplayMemory = 256 << 20

// Replay has the exporter serve primary tenants from a CPU trace instead of
// their cgroups: each cgroup of Tenants keeps its id=<cgroup> label, its
// container_cpu_usage_seconds_total is the trace's CPUSeconds for its tenant
// on a node of NodeCores, stamped with the time it was computed for, and its
// container_memory_usage_bytes is MemoryBytes. The host's series stay the
// host's.
type Replay struct {
	Trace     *replay.Trace
	NodeCores float64
	Tenants   map[string]string // cgroup path -> tenant (environment/function)
	// MemoryBytes is every replayed primary's memory; 0 means
	// DefaultReplayMemory.
	MemoryBytes float64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// check validates the replay and returns its cgroups in order.
func (r *Replay) check(cgroups []string) ([]string, error) {
	switch {
	case len(cgroups) > 0:
		return nil, errors.New("replay: the primary cgroups are the replay's tenants' (CGROUP=TENANT), none read for real")
	case r.Trace == nil:
		return nil, errors.New("replay: no trace")
	case r.NodeCores <= 0:
		return nil, fmt.Errorf("replay: node cores %v: want a positive number", r.NodeCores)
	case len(r.Tenants) == 0:
		return nil, errors.New("replay: map at least one cgroup to a tenant")
	}
	out := make([]string, 0, len(r.Tenants))
	tenants := make([]string, 0, len(r.Tenants))
	for path, tenant := range r.Tenants {
		out, tenants = append(out, path), append(tenants, tenant)
	}
	sort.Strings(out)
	sort.Strings(tenants)
	if err := r.Trace.Check(tenants...); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return out, nil
}

// collectReplay sends every replayed cgroup's series. The time is taken to
// the millisecond, the stamps' resolution, so that a counter is exactly
// what the trace says at its stamp.
func (c *exporterCollector) collectReplay(ch chan<- prometheus.Metric) {
	r := c.replay
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	at := now().Truncate(time.Millisecond)
	mem := r.MemoryBytes
	if mem == 0 {
		mem = DefaultReplayMemory
	}
	for _, path := range c.cgroups {
		sec := r.Trace.CPUSeconds(r.Tenants[path], at, r.NodeCores)
		ch <- prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(c.cgCPU, prometheus.CounterValue, sec, path))
		ch <- prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(c.cgMem, prometheus.GaugeValue, mem, path))
	}
}
