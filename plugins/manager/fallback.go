package manager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// FallbackUsageSource serves Sample from an external usage source while it
// answers and from a built-in while it does not (down, crashed, hung, or
// failing), so the driver always has a measurement to enforce its reserve
// with. Each switch is logged and harvest_plugin_fallback_active{plugin}
// follows it.
type FallbackUsageSource struct {
	external, builtin usagesource.Source
	name              string // the external's block name, for logs and metrics
	log               hclog.Logger
	met               *metrics
	// BuiltinTimeout bounds the built-in's Sample, which gets a context of its
	// own: the caller's may have been spent waiting on a hung plugin.
	BuiltinTimeout time.Duration
	// KeepBuiltinWarm samples the built-in on every Sample, the answer thrown
	// away while the external answers (default true). A built-in that rates
	// counters between calls, as the driver's /proc source does, then
	// measures over one tick when it takes over, not over the hours since it
	// last served, which would average a spike away.
	KeepBuiltinWarm bool
	// MaxAge is how old a sample may be (usagesource.Usage.Check; 0: any
	// age). A sample failing Check, NaN or negative CPU or older than this,
	// counts as a failure of its source: the external's hands over to the
	// built-in, and the built-in's fails the Sample.
	MaxAge time.Duration

	mu         sync.Mutex
	onBuiltin  bool
	lastReason error
}

var _ usagesource.Source = (*FallbackUsageSource)(nil)

// Fallback returns a FallbackUsageSource over two configured usage sources:
// external (usually a plugin binary) and builtin (usually the driver's own).
func (m *Manager) Fallback(external, builtin string) (*FallbackUsageSource, error) {
	ext, err := m.UsageSource(external)
	if err != nil {
		return nil, err
	}
	b, err := m.UsageSource(builtin)
	if err != nil {
		return nil, err
	}
	f := &FallbackUsageSource{external: ext, builtin: b, name: external, log: m.log.Named(external).Named("fallback"), met: m.met,
		BuiltinTimeout: 5 * time.Second, KeepBuiltinWarm: true}
	f.met.fallback.WithLabelValues(external).Set(0)
	return f, nil
}

// NewFallbackUsageSource is Fallback for sources that did not come from a
// Manager (metrics unregistered).
func NewFallbackUsageSource(external, builtin usagesource.Source, name string, log hclog.Logger) *FallbackUsageSource {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &FallbackUsageSource{external: external, builtin: builtin, name: name, log: log, met: newMetrics(nil),
		BuiltinTimeout: 5 * time.Second, KeepBuiltinWarm: true}
}

// Sample measures with the external source, or with the built-in when the
// external fails or its sample fails Check. It fails only when both do.
func (f *FallbackUsageSource) Sample(ctx context.Context) (usagesource.Usage, error) {
	u, err := f.external.Sample(ctx)
	if err == nil {
		err = u.Check(time.Now(), f.MaxAge)
	}
	if err == nil {
		f.switchTo(false, nil)
		if f.KeepBuiltinWarm {
			bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.BuiltinTimeout)
			_, _ = f.builtin.Sample(bctx)
			cancel()
		}
		return u, nil
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return usagesource.Usage{}, err // the caller gave up: nothing to fall back for
	}
	f.switchTo(true, err)
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.BuiltinTimeout)
	defer cancel()
	u, berr := f.builtin.Sample(bctx)
	if berr == nil {
		berr = u.Check(time.Now(), f.MaxAge)
	}
	if berr != nil {
		return usagesource.Usage{}, fmt.Errorf("usage source %q: %w; built-in fallback: %w", f.name, err, berr)
	}
	return u, nil
}

func (f *FallbackUsageSource) switchTo(builtin bool, reason error) {
	f.mu.Lock()
	changed := f.onBuiltin != builtin
	f.onBuiltin, f.lastReason = builtin, reason
	f.mu.Unlock()
	if !changed {
		return
	}
	if builtin {
		f.met.fallback.WithLabelValues(f.name).Set(1)
		f.log.Warn("usage source failed: sampling from the built-in until it is back", "error", reason)
	} else {
		f.met.fallback.WithLabelValues(f.name).Set(0)
		f.log.Info("usage source is back: sampling from it again")
	}
}

// OnBuiltin says whether the last Sample came from the built-in.
func (f *FallbackUsageSource) OnBuiltin() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.onBuiltin
}

// SetConfig configures the external source (the built-in has its own block).
func (f *FallbackUsageSource) SetConfig(config map[string]string) error {
	return f.external.SetConfig(config)
}

// PluginInfo describes the source serving now.
func (f *FallbackUsageSource) PluginInfo() (*base.PluginInfo, error) {
	if f.OnBuiltin() {
		return f.builtin.PluginInfo()
	}
	return f.external.PluginInfo()
}
