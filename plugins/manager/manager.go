// Package manager owns loading and supervising Harvest's plugins for a
// component: it decodes the usage_source and history_importer config blocks
// (config.go), runs each block's driver either as a built-in the component
// registers in-process or as a binary in plugin_dir launched over go-plugin
// (gRPC, AutoMTLS), restarts a crashed or hung external plugin with backoff
// (supervisor.go), reports every plugin's state through a callback, hclog and
// Prometheus (metrics.go), and keeps a usage source answering from a
// built-in while its external plugin is down (fallback.go).
//
// It is part of the plugin SDK and imports nothing of Harvest outside
// plugins/.
package manager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// Builtins are the drivers a component runs in-process, by driver name. A
// block whose driver is a built-in's name runs it (the factory, then
// SetConfig with the block's config); any other driver is a binary in
// plugin_dir.
type Builtins struct {
	UsageSources     map[string]func(log hclog.Logger) (usagesource.Source, error)
	HistoryImporters map[string]func(log hclog.Logger) (historyimporter.Importer, error)
}

// Options are the component's hooks.
type Options struct {
	Logger hclog.Logger // default: hclog.NewNullLogger()
	// Registerer receives the harvest_plugin_* metrics (nil: not registered).
	Registerer prometheus.Registerer
	// OnState is called (from any goroutine) whenever a plugin goes up or
	// down, or fails to restart.
	OnState func(State)
}

// State is one plugin's state.
type State struct {
	Name     string // the block's name
	Type     string // base.PluginTypeUsageSource or base.PluginTypeHistoryImporter
	Driver   string
	External bool
	Up       bool
	Restarts int
	Pid      int   // the running plugin process (0: built-in, or down)
	Err      error // why it is down; nil while up
}

// Manager runs a component's configured plugins.
type Manager struct {
	log       hclog.Logger
	met       *metrics
	onState   func(State)
	usage     map[string]usagesource.Source
	importers map[string]historyimporter.Importer
	states    []func() State
	closers   []func()
}

// New resolves every block's driver and starts every plugin. It fails on a
// driver that is neither a built-in nor an executable in plugin_dir, or on a
// built-in refusing its config; an external plugin that fails to start is
// reported down and retried in the background like a crashed one.
func New(cfg *Config, builtins Builtins, opts Options) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{log: opts.Logger, met: newMetrics(opts.Registerer), onState: opts.OnState,
		usage: map[string]usagesource.Source{}, importers: map[string]historyimporter.Importer{}}
	if m.log == nil {
		m.log = hclog.NewNullLogger()
	}
	var errs []error
	for _, p := range cfg.UsageSources {
		src, err := load(m, cfg.PluginDir, p, base.PluginTypeUsageSource, builtins.UsageSources,
			func(s Supervision) plugin.Plugin { return &usagesource.Plugin{CallTimeout: s.CallTimeout} },
			func(in *instance[usagesource.Source]) usagesource.Source {
				return &supervisedSource{supervised[usagesource.Source]{in}}
			})
		m.usage[p.Name] = src
		errs = append(errs, err)
	}
	for _, p := range cfg.HistoryImporters {
		imp, err := load(m, cfg.PluginDir, p, base.PluginTypeHistoryImporter, builtins.HistoryImporters,
			func(s Supervision) plugin.Plugin { return &historyimporter.Plugin{CallTimeout: s.CallTimeout} },
			func(in *instance[historyimporter.Importer]) historyimporter.Importer {
				return &supervisedImporter{supervised[historyimporter.Importer]{in}}
			})
		m.importers[p.Name] = imp
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// load runs one block: its built-in, or its binary under supervision.
func load[T base.Base](m *Manager, dir string, p *PluginConfig, typ string,
	builtins map[string]func(hclog.Logger) (T, error), grpcPlugin func(Supervision) plugin.Plugin, wrap func(*instance[T]) T) (T, error) {
	var zero T
	log := m.log.Named(p.Name)
	if factory, ok := builtins[p.Driver]; ok {
		impl, err := factory(log)
		if err == nil {
			err = impl.SetConfig(p.Config)
		}
		if err != nil {
			return zero, fmt.Errorf("%s %q: built-in %q: %w", typ, p.Name, p.Driver, err)
		}
		m.met.up.WithLabelValues(p.Name).Set(1)
		st := State{Name: p.Name, Type: typ, Driver: p.Driver, Up: true}
		m.states = append(m.states, func() State { return st })
		m.notify(st)
		log.Info("built-in plugin ready", "driver", p.Driver)
		return impl, nil
	}
	if dir == "" {
		return zero, fmt.Errorf("%s %q: %q is not a built-in, and plugin_dir is not set", typ, p.Name, p.Driver)
	}
	path := filepath.Join(dir, p.Driver)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return zero, fmt.Errorf("%s %q: %q is not a built-in, nor an executable file in plugin_dir (%s)", typ, p.Name, p.Driver, path)
	}
	sup, _ := p.Supervision() // checked by Validate
	in := &instance[T]{m: m, cfg: p, typ: typ, path: path, sup: sup, gp: grpcPlugin(sup), log: log, config: p.Config}
	m.states = append(m.states, in.state)
	m.closers = append(m.closers, in.close)
	in.start(false)
	return wrap(in), nil
}

func (m *Manager) notify(s State) {
	if m.onState != nil {
		m.onState(s)
	}
}

// UsageSource returns the usage_source block name's plugin.
func (m *Manager) UsageSource(name string) (usagesource.Source, error) {
	if s, ok := m.usage[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("no usage_source %q is configured", name)
}

// HistoryImporter returns the history_importer block name's plugin.
func (m *Manager) HistoryImporter(name string) (historyimporter.Importer, error) {
	if s, ok := m.importers[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("no history_importer %q is configured", name)
}

// States returns every plugin's state, in config order.
func (m *Manager) States() []State {
	out := make([]State, 0, len(m.states))
	for _, f := range m.states {
		out = append(out, f())
	}
	return out
}

// Close kills every external plugin and stops restarting them.
func (m *Manager) Close() {
	for _, c := range m.closers {
		c()
	}
}
