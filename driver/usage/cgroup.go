package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
)

// Cgroup measures the primary tenant's own cgroup (cgroup v1 or v2) against
// a configured capacity.
type Cgroup struct {
	root     string // /sys/fs/cgroup
	path     string // the primary tenant's cgroup, relative to each hierarchy
	capacity guard.Resources
	v2       bool
	now      func() time.Time

	mu       sync.Mutex
	lastNS   uint64
	lastTime time.Time
	peekNS   uint64 // PeekCPU's own window
	peekTime time.Time
}

var (
	_ Source = (*Cgroup)(nil)
	_ Peeker = (*Cgroup)(nil)
)

// NewCgroup watches the cgroup at path (e.g. "/primary.slice") under root.
func NewCgroup(root, path string, capacity guard.Resources) (*Cgroup, error) {
	c := &Cgroup{root: root, path: strings.TrimPrefix(path, "/"), capacity: capacity, now: time.Now}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		c.v2 = true
	}
	ns, err := c.cpuNanos()
	if err != nil {
		return nil, err
	}
	c.lastNS, c.lastTime = ns, c.now()
	c.peekNS, c.peekTime = c.lastNS, c.lastTime
	if _, err := c.memoryMiB(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cgroup) Name() string              { return "cgroup" }
func (c *Cgroup) Capacity() guard.Resources { return c.capacity }

// Primary is the cgroup's CPU since the previous call (cores) and its
// memory; harvested tasks are not in it, so harvested is ignored.
func (c *Cgroup) Primary(guard.Resources) (guard.Resources, error) {
	cores, err := c.cores(&c.lastNS, &c.lastTime)
	if err != nil {
		return guard.Resources{}, err
	}
	mem, err := c.memoryMiB()
	if err != nil {
		return guard.Resources{}, err
	}
	return guard.Resources{CPU: cores, MemoryMiB: mem}, nil
}

// PeekCPU is the cgroup's CPU since the previous PeekCPU (cores).
func (c *Cgroup) PeekCPU(func() float64) (float64, error) { return c.cores(&c.peekNS, &c.peekTime) }

// cores is the CPU since the counter and time a window last read, which it
// moves to now.
func (c *Cgroup) cores(lastNS *uint64, lastTime *time.Time) (float64, error) {
	ns, err := c.cpuNanos()
	if err != nil {
		return 0, err
	}
	now := c.now()
	c.mu.Lock()
	dNS, dT, back := ns-*lastNS, now.Sub(*lastTime), ns < *lastNS
	*lastNS, *lastTime = ns, now
	c.mu.Unlock()
	if back { // the cgroup was made anew: its counter restarted
		return 0, fmt.Errorf("%s: CPU counter went backwards (cgroup recreated?); measuring from here", c.path)
	}
	if dT <= 0 {
		return 0, nil
	}
	return float64(dNS) / float64(dT.Nanoseconds()), nil
}

// Counters are the cgroup's cumulative CPU time and its memory now, as a
// metrics exporter publishes them (the local cluster's exporter does, for
// the drivers' external usage source to read what this source reads).
func (c *Cgroup) Counters() (cpuSeconds float64, memoryBytes float64, err error) {
	ns, err := c.cpuNanos()
	if err != nil {
		return 0, 0, err
	}
	mib, err := c.memoryMiB()
	return float64(ns) / 1e9, mib * (1 << 20), err
}

func (c *Cgroup) file(controller, name string) string {
	if c.v2 {
		return filepath.Join(c.root, c.path, name)
	}
	return filepath.Join(c.root, controller, c.path, name)
}

func (c *Cgroup) cpuNanos() (uint64, error) {
	if !c.v2 {
		return readUint(c.file("cpuacct", "cpuacct.usage"))
	}
	data, err := os.ReadFile(c.file("", "cpu.stat"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return us * 1000, err
		}
	}
	return 0, fmt.Errorf("%s: no usage_usec", c.file("", "cpu.stat"))
}

func (c *Cgroup) memoryMiB() (float64, error) {
	name := "memory.usage_in_bytes"
	if c.v2 {
		name = "memory.current"
	}
	b, err := readUint(c.file("memory", name))
	return float64(b) / (1 << 20), err
}

func readUint(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
