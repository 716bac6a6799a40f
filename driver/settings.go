package driver

import (
	"fmt"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/driver/taskuser"
)

// Defaults of the plugin config (about.go's spec says them to Nomad).
const (
	defaultGuardInterval = "200ms"
	defaultSpikeCheck    = "50ms"
	defaultEvictGrace    = "500ms"
	defaultStaleAfter    = "3s"
	defaultHarvestCgroup = "/harvest"
	// defaultReserveFloor is the least reserve a declaration may set, of
	// the node's capacity: whatever the placer's documents say, a tenant
	// keeps a tenth of its server.
	defaultReserveFloor = "10%"
	noCgroup            = "none" // harvest_cgroup value: leave the tasks where Nomad puts them
)

// settings are the parsed, ready-to-use parts of Config, checked when the
// config is loaded (SetConfig fails on a bad value, naming it).
type settings struct {
	capacity, reserve guard.Resources
	// floor is the least a declared reserve may be (reserve_floor_*); a
	// declaration below it is refused (declared.go)
	floor         guard.Resources
	interval      time.Duration
	spikeCheck    time.Duration // how often the spike check peeks between ticks; 0: never (spike.go)
	hysteresis    guard.Hysteresis
	policy        guard.Policy // suppression, eviction grace, fail-safe
	harvestCgroup string       // the tasks' parent cgroup; "" for none
	cpuIdle       bool
	capMethod     harvestcg.CapMethod
	users         taskuser.Policy
}

func parseSettings(cfg Config, capacity guard.Resources) (settings, error) {
	s := settings{capacity: capacity, cpuIdle: cfg.CPUIdle}
	var err error
	if s.reserve, err = guard.ParseReserve(or(cfg.ReserveCPU, guard.DefaultReserveCPU), or(cfg.ReserveMemory, guard.DefaultReserveMemory), capacity); err != nil {
		return s, err
	}
	// Config{} built in code (tests) has no floor; the HCL default is 10%
	if s.floor, err = guard.ParseReserve(or(cfg.ReserveFloorCPU, "0"), or(cfg.ReserveFloorMemory, "0"), capacity); err != nil {
		return s, fmt.Errorf("reserve_floor: %w", err)
	}
	if s.interval, err = time.ParseDuration(or(cfg.GuardInterval, defaultGuardInterval)); err != nil || s.interval <= 0 {
		return s, fmt.Errorf("guard_interval %q: want a positive duration", cfg.GuardInterval)
	}
	if s.spikeCheck, err = time.ParseDuration(or(cfg.SpikeCheck, defaultSpikeCheck)); err != nil || s.spikeCheck < 0 ||
		(s.spikeCheck > 0 && s.spikeCheck < minSpikeCheck) {
		return s, fmt.Errorf("spike_check %q: want 0 (off) or a duration of at least %s", cfg.SpikeCheck, minSpikeCheck)
	}
	if 2*s.spikeCheck > s.interval { // two peeks confirm a spike: no sooner than the next tick
		s.spikeCheck = 0
	}
	window, err := time.ParseDuration(or(cfg.AdmitWindow, "30s"))
	if err != nil || window < 0 {
		return s, fmt.Errorf("admit_window %q: want a duration", cfg.AdmitWindow)
	}
	s.hysteresis = guard.Hysteresis{AdmitWindow: window, AdmitMargin: guard.Resources{CPU: cfg.AdmitMarginCPU, MemoryMiB: cfg.AdmitMarginMemory}}

	p := guard.Policy{ProgressShare: cfg.ProgressShare, LendIdleReserve: cfg.LendIdleReserve}
	if p.Grace, err = time.ParseDuration(or(cfg.EvictGrace, defaultEvictGrace)); err != nil || p.Grace < 0 {
		return s, fmt.Errorf("evict_grace %q: want a duration of 0 or more", cfg.EvictGrace)
	}
	if p.ProgressShare == 0 {
		p.ProgressShare = 1
	}
	if p.ProgressShare < 0 || p.ProgressShare > 1 {
		return s, fmt.Errorf("progress_share %v: want a share of the task's CPU allocation in (0, 1]", cfg.ProgressShare)
	}
	staleAfter := cfg.StaleAfter
	if staleAfter == "" { // not from HCL (whose default is defaultStaleAfter): one that fits the interval
		d, _ := time.ParseDuration(defaultStaleAfter)
		staleAfter = max(d, 5*s.interval).String()
	}
	if p.StaleAfter, err = time.ParseDuration(staleAfter); err != nil || p.StaleAfter < 2*s.interval {
		return s, fmt.Errorf("stale_after %q: want a duration of at least two guard_intervals (%s)", cfg.StaleAfter, 2*s.interval)
	}
	if s.capMethod, err = harvestcg.ParseCapMethod(cfg.CapMethod); err != nil {
		return s, err
	}
	s.policy = p

	switch cg := strings.TrimSpace(or(cfg.HarvestCgroup, defaultHarvestCgroup)); {
	case cg == noCgroup:
	case !strings.HasPrefix(cg, "/") || strings.Contains(cg, "..") || cg == "/":
		return s, fmt.Errorf("harvest_cgroup %q: want an absolute cgroup path such as %q, or %q", cfg.HarvestCgroup, defaultHarvestCgroup, noCgroup)
	default:
		s.harvestCgroup = cg
	}
	if s.users, err = taskuser.Parse(cfg.users()); err != nil {
		return s, err
	}
	return s, nil
}

// users is the config's say on who tasks run as.
func (c Config) users() taskuser.Settings {
	return taskuser.Settings{DefaultUser: c.DefaultUser, AllowRoot: c.AllowRoot,
		DeniedHostUIDs: c.DeniedHostUIDs, DeniedHostGIDs: c.DeniedHostGIDs}
}
