package driver

// An external usage source. With plugin_config and usage_plugin set, the
// guard loop reads the usage_plugin block of the plugin_config file through
// the plugin manager (plugins/manager), and reads the built-in source that
// usage_source configures while that plugin is down, hung, restarting or
// failing (manager.Fallback), so the reserve is never left unenforced:
//
//	plugin_config = "/etc/harvest/usage-plugins.hcl"  # plugin_dir, usage_source "<name>" { ... } blocks
//	usage_plugin  = "node"                              # the block the guard reads
//	usage_source  = "proc"                              # its fallback, as without a plugin
//
// Only the usage_plugin block of the file is run (the file may hold blocks
// for other components); the built-in runs as a block of its own named
// after its kind ("proc" or "cgroup"), which the plugin's block may not be
// named. The guard waits up to the block's call_timeout on a hung plugin, so
// keep it short (a second or two, not the manager's 10 s default).
//
// Capacity: the plugin's capacity if its first sample, at SetConfig,
// reports one (per resource), else the built-in's. It is then fixed until
// the next SetConfig: the reserve's percentages, admission and the busy
// threshold are computed from it, and must not move when the samples switch
// between the plugin and its fallback.

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/harvest-platform/harvest/driver/usage"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// maxQuietCallTimeout is the longest call_timeout the driver takes without
// a warning.
const maxQuietCallTimeout = 2 * time.Second

// The usage plugin's states, as the fingerprint says them.
const (
	pluginUp       = "up"             // the guard reads the plugin
	pluginFallback = "down(fallback)" // the guard reads the built-in
)

// usagePlugin is the running external usage source: its manager, the
// fallback over it, and the state last announced.
type usagePlugin struct {
	name    string // the usage_plugin block
	builtin string // the fallback's kind and block name: "proc" or "cgroup"
	m       *manager.Manager
	fb      *manager.FallbackUsageSource
	ready   atomic.Bool  // m and fb are set
	last    atomic.Value // string: the state last announced
	changed func(state string)
}

// startUsagePlugin runs cfg's usage plugin with the built-in kind (config
// conf) as its fallback and returns it with the guard loop's source over
// both. A plugin that exists but fails to start is no error here: the
// manager retries it and the built-in serves meanwhile.
func (d *Driver) startUsagePlugin(cfg Config, kind string, conf map[string]string) (*usagePlugin, usage.Source, error) {
	switch {
	case cfg.UsagePlugin == "":
		return nil, nil, errors.New("plugin_config is set but usage_plugin is not: name the usage_source block the driver reads")
	case cfg.PluginConfig == "":
		return nil, nil, fmt.Errorf("usage_plugin %q needs plugin_config, the file holding its usage_source block", cfg.UsagePlugin)
	}
	src, err := os.ReadFile(cfg.PluginConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("plugin_config: %w", err)
	}
	pc, err := manager.ParseConfig(src, cfg.PluginConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("plugin_config %s: %w", cfg.PluginConfig, err)
	}
	var block *manager.PluginConfig
	var names []string
	for _, b := range pc.UsageSources {
		names = append(names, b.Name)
		if b.Name == cfg.UsagePlugin {
			block = b
		}
	}
	switch {
	case block == nil:
		return nil, nil, fmt.Errorf("usage_plugin %q: %s has no usage_source %q block (it has %q)", cfg.UsagePlugin, cfg.PluginConfig, cfg.UsagePlugin, names)
	case block.Name == kind:
		return nil, nil, fmt.Errorf("usage_plugin %q: the name is the built-in fallback's (usage_source = %q); rename the block", block.Name, kind)
	}

	if sup, _ := block.Supervision(); sup.CallTimeout > maxQuietCallTimeout { // Supervision was checked by ParseConfig
		d.logger.Warn("usage plugin's call_timeout is long: a hung plugin holds the guard loop that long before the built-in takes over",
			"usage_plugin", block.Name, "call_timeout", sup.CallTimeout)
	}
	p := &usagePlugin{name: block.Name, builtin: kind}
	p.changed = func(state string) { d.usagePluginChanged(p, state) }
	run := &manager.Config{PluginDir: pc.PluginDir, UsageSources: []*manager.PluginConfig{block, {Name: kind, Driver: kind, Config: conf}}}
	m, err := manager.New(run, manager.Builtins{UsageSources: usage.Builtins()}, manager.Options{
		Logger: d.logger.Named("plugins"), Registerer: d.metrics, OnState: func(manager.State) { p.check() }})
	if err != nil {
		return nil, nil, err
	}
	fb, err1 := m.Fallback(block.Name, kind)
	b, err2 := m.UsageSource(kind)
	ext, err3 := m.UsageSource(block.Name)
	bp, ok := b.(*usage.Plugin)
	if err := errors.Join(err1, err2, err3); err != nil || !ok {
		m.Close()
		return nil, nil, fmt.Errorf("usage plugin %q: %w (built-in %T)", block.Name, err, b)
	}
	p.m, p.fb = m, fb
	p.ready.Store(true)

	capacity, from := bp.Source().Capacity(), "built-in"
	if u, err := ext.Sample(d.ctx); err != nil {
		d.logger.Warn("usage plugin did not answer at start: capacity from the built-in until the next SetConfig",
			"usage_plugin", block.Name, "error", err)
	} else if c := usage.CapacityOf(u, capacity); c != capacity {
		capacity, from = c, "plugin"
	}
	d.logger.Info("usage plugin configured", "usage_plugin", block.Name, "driver", block.Driver, "fallback", kind,
		"capacity_from", from, "capacity_cores", capacity.CPU, "capacity_mib", capacity.MemoryMiB)
	p.check()
	return p, usage.NewPluginSource(d.ctx, fb, block.Name, capacity), nil
}

// state says whether the guard reads the plugin now: its process is up and
// the last sample came from it.
func (p *usagePlugin) state() string {
	if !p.ready.Load() {
		return pluginFallback
	}
	for _, s := range p.m.States() {
		if s.Name == p.name && s.Up && !p.fb.OnBuiltin() {
			return pluginUp
		}
	}
	return pluginFallback
}

// check announces a change of state. The manager calls it on every plugin
// state change (OnState, from any goroutine), the guard loop after every
// sample (a plugin whose process is up can still fail its samples).
func (p *usagePlugin) check() {
	if !p.ready.Load() {
		return
	}
	s := p.state()
	if old, _ := p.last.Swap(s).(string); old != s {
		p.changed(s)
	}
}

// close kills the plugin process and stops restarting it; nil-safe.
func (p *usagePlugin) close() {
	if p != nil && p.m != nil {
		p.m.Close()
	}
}

// usagePluginChanged logs p's new state and re-fingerprints at once.
func (d *Driver) usagePluginChanged(p *usagePlugin, state string) {
	if state == pluginUp {
		d.logger.Info("usage plugin up: the guard reads it", "usage_plugin", p.name)
	} else {
		d.logger.Warn("usage plugin down: the guard reads the built-in", "usage_plugin", p.name, "fallback", p.builtin)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.plugin == p || d.plugin == nil {
		d.wakeFingerprintLocked()
	}
}
