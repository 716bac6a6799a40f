package usage

// Adapters between the driver's sources and the plugin SDK's usage-source
// type (plugins/usagesource), both ways: Plugin serves Proc or Cgroup as a
// usagesource.Source, so the plugin manager runs them as the built-ins
// "proc" and "cgroup"; PluginSource reads any usagesource.Source (an
// external plugin, or the manager's fallback over one) as the guard loop's
// Source. The SDK speaks bytes and says whether a sample measured the whole
// host or the primary alone; the guard speaks cores and MiB of the primary.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/internal/version"
	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

const mib = 1 << 20

// New builds a built-in source from a usage_source block's config map:
//
//	proc:   root (default /proc)
//	cgroup: primary_cgroup, capacity_cpu (cores), capacity_memory (MiB), all
//	        required; root (default /sys/fs/cgroup)
func New(kind string, config map[string]string) (Source, error) {
	known := map[string][]string{"proc": {"root"}, "cgroup": {"root", "primary_cgroup", "capacity_cpu", "capacity_memory"}}[kind]
	if known == nil {
		return nil, fmt.Errorf("usage source %q: want \"proc\" or \"cgroup\"", kind)
	}
	for k := range config {
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("%s: unknown config key %q (known: %v)", kind, k, known)
		}
	}
	root := func(def string) string { return orDefault(config["root"], def) }
	if kind == "proc" {
		return NewProc(root("/proc"))
	}
	cpu, errC := strconv.ParseFloat(config["capacity_cpu"], 64)
	mem, errM := strconv.ParseFloat(config["capacity_memory"], 64)
	if config["primary_cgroup"] == "" || errC != nil || errM != nil || cpu <= 0 || mem <= 0 {
		return nil, errors.New("cgroup: needs primary_cgroup, and capacity_cpu (cores) and capacity_memory (MiB) above 0")
	}
	return NewCgroup(root("/sys/fs/cgroup"), config["primary_cgroup"], guard.Resources{CPU: cpu, MemoryMiB: mem})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Builtins are the factories the plugin manager runs the driver's sources
// with: a usage_source block whose driver is "proc" or "cgroup" gets a
// Plugin, configured by the block's config map (see New).
func Builtins() map[string]func(hclog.Logger) (usagesource.Source, error) {
	out := map[string]func(hclog.Logger) (usagesource.Source, error){}
	for _, kind := range []string{"proc", "cgroup"} {
		out[kind] = func(hclog.Logger) (usagesource.Source, error) { return &Plugin{kind: kind}, nil }
	}
	return out
}

// Plugin serves a built-in Source as a usage-source plugin. Sample is
// Primary with nothing subtracted: Proc's samples are host-measured (the
// reader subtracts its harvested tasks), Cgroup's measure the primary
// alone. Like Primary, each Sample rates the CPU counters since the previous
// one, so whoever reads it should read it every tick (the manager's
// fallback does: KeepBuiltinWarm) or the first reading after a pause
// averages over the pause.
type Plugin struct {
	kind string
	mu   sync.Mutex
	src  Source
}

var _ usagesource.Source = (*Plugin)(nil)

// SetConfig builds the source from config (see New).
func (p *Plugin) SetConfig(config map[string]string) error {
	src, err := New(p.kind, maps.Clone(config))
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.src = src
	p.mu.Unlock()
	return nil
}

// PluginInfo names the built-in.
func (p *Plugin) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: p.kind, Type: base.PluginTypeUsageSource, Version: version.Number()}, nil
}

// Source is the configured source (nil before SetConfig).
func (p *Plugin) Source() Source {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.src
}

// Sample measures now; ctx is not needed (the files are local).
func (p *Plugin) Sample(context.Context) (usagesource.Usage, error) {
	src := p.Source()
	if src == nil {
		return usagesource.Usage{}, fmt.Errorf("%s: not configured", p.kind)
	}
	r, err := src.Primary(guard.Resources{})
	if err != nil {
		return usagesource.Usage{}, err
	}
	c := src.Capacity()
	u := usagesource.Usage{Time: time.Now(), CapacityCPUCores: c.CPU, CapacityMemoryBytes: uint64(c.MemoryMiB * mib)}
	if _, host := src.(*Proc); host {
		u.HostMeasured, u.HostCPUCores, u.HostMemoryBytes = true, r.CPU, uint64(r.MemoryMiB*mib)
	} else {
		u.PrimaryCPUCores, u.PrimaryMemoryBytes = r.CPU, uint64(r.MemoryMiB*mib)
	}
	return u, nil
}

// PluginSource reads a usage-source plugin as the guard loop's Source. Its
// capacity is fixed when it is made (see CapacityOf): the reserve and the
// busy threshold are computed from it once, and must not move when the
// samples switch between a plugin and its fallback.
type PluginSource struct {
	ctx      context.Context // bounds every Sample (the driver's life); the plugin's call_timeout bounds each
	src      usagesource.Source
	name     string
	capacity guard.Resources
}

var _ Source = (*PluginSource)(nil)

// NewPluginSource reads src, named name, with the given capacity.
func NewPluginSource(ctx context.Context, src usagesource.Source, name string, capacity guard.Resources) *PluginSource {
	return &PluginSource{ctx: ctx, src: src, name: name, capacity: capacity}
}

func (s *PluginSource) Name() string              { return s.name }
func (s *PluginSource) Capacity() guard.Resources { return s.capacity }

// Primary samples the plugin and converts the sample (PrimaryOf). A sample
// holding NaN, an infinity or a negative value is an error: the guard then
// keeps the last good measurement rather than compare against garbage.
func (s *PluginSource) Primary(harvested guard.Resources) (guard.Resources, error) {
	u, err := s.src.Sample(s.ctx)
	if err != nil {
		return guard.Resources{}, err
	}
	for _, v := range []float64{u.HostCPUCores, u.PrimaryCPUCores, u.CapacityCPUCores} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return guard.Resources{}, fmt.Errorf("usage source %q: invalid sample %+v", s.name, u)
		}
	}
	return PrimaryOf(u, harvested), nil
}

// PrimaryOf is the primary tenant's use in a sample, in cores and MiB: a
// host-measured sample less what the harvested tasks use (never below 0),
// as Proc computes it; a primary-measured one as it is.
func PrimaryOf(u usagesource.Usage, harvested guard.Resources) guard.Resources {
	if u.HostMeasured {
		return guard.Resources{CPU: max(0, u.HostCPUCores-harvested.CPU), MemoryMiB: max(0, float64(u.HostMemoryBytes)/mib-harvested.MemoryMiB)}
	}
	return guard.Resources{CPU: u.PrimaryCPUCores, MemoryMiB: float64(u.PrimaryMemoryBytes) / mib}
}

// CapacityOf is the capacity a sample reports, per resource, where it
// reports one (above 0 and finite), else builtin's.
func CapacityOf(u usagesource.Usage, builtin guard.Resources) guard.Resources {
	c := builtin
	if u.CapacityCPUCores > 0 && !math.IsInf(u.CapacityCPUCores, 0) {
		c.CPU = u.CapacityCPUCores
	}
	if u.CapacityMemoryBytes > 0 {
		c.MemoryMiB = float64(u.CapacityMemoryBytes) / mib
	}
	return c
}
