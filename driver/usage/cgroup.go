package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// Cgroup measures the primary tenant's own cgroup (cgroup v1 or v2) against
// a configured capacity.
type Cgroup struct {
	root     string // /sys/fs/cgroup
	path     string // the primary tenant's cgroup, relative to each hierarchy
	capacity guard.Resources
	v2       bool
	now      func() time.Time

	tick usagesource.Meter // Primary's windows
	peek usagesource.Meter // PeekCPU's own
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
	if err := c.restart(); err != nil {
		return nil, err
	}
	if _, err := c.memoryMiB(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cgroup) Name() string              { return "cgroup" }
func (c *Cgroup) Capacity() guard.Resources { return c.capacity }

// Primary is the cgroup's CPU since the previous call (cores) and its
// memory; harvested tasks are not in it, so harvested is ignored. A window
// whose timing is too uncertain gives an error wrapping
// usagesource.ErrUncertainTiming, and the next call covers it.
func (c *Cgroup) Primary(guard.Resources) (guard.Resources, error) {
	rate, err := c.cores(&c.tick)
	if err != nil {
		return guard.Resources{}, err
	}
	mem, err := c.memoryMiB()
	if err != nil {
		return guard.Resources{}, err
	}
	return guard.Resources{CPU: rate.PerSecond, MemoryMiB: mem}, nil
}

// counterLag is how far the cgroup's CPU counter may trail a running thread:
// the kernel charges a thread's run time at its scheduler tick (4 ms at HZ
// 250, the common setting) or when it sleeps, so the counter read at a
// window's start may be short by up to a tick, and the window's rise long by
// as much. One tick, not one per CPU: it is the noise of a single thread at a
// core's boundary (a 0.6-core process catching up at a full core read 1.05)
// that must not round up to a second core, and a tick per CPU would blind
// the spike check on a large server.
const counterLag = 4 * time.Millisecond

// PeekCPU is the cgroup's CPU since the previous PeekCPU. Least is the rise
// less counterLag over the longest the window may have lasted.
func (c *Cgroup) PeekCPU(func() float64) (Peek, error) {
	rate, err := c.cores(&c.peek)
	if err != nil {
		return Peek{}, err
	}
	least := max(0, rate.Least-counterLag.Seconds()/rate.Longest.Seconds())
	return Peek{Cores: rate.PerSecond, Least: least}, nil
}

// cores rates the CPU counter over m's window up to now.
func (c *Cgroup) cores(m *usagesource.Meter) (usagesource.Rate, error) {
	r, err := c.ReadCPU()
	if err != nil {
		return usagesource.Rate{}, err
	}
	rate, ok, err := m.Next(r)
	if err != nil {
		return usagesource.Rate{}, fmt.Errorf("%s: %w", c.path, err)
	}
	if !ok {
		return usagesource.Rate{}, fmt.Errorf("%s: no window yet", c.path)
	}
	return rate, nil
}

// restart starts both windows from a reading now.
func (c *Cgroup) restart() error {
	r, err := c.ReadCPU()
	if err != nil {
		return err
	}
	c.tick.Start(r)
	c.peek.Start(r)
	return nil
}

// ReadCPU reads the cumulative CPU seconds between two clock readings, as
// every window of the source does.
func (c *Cgroup) ReadCPU() (usagesource.Reading, error) {
	return usagesource.ReadCounter(c.now, func() (float64, error) {
		ns, err := c.cpuNanos()
		return float64(ns) / 1e9, err
	})
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
