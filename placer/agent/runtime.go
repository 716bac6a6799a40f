package agent

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/periodic"
	"github.com/harvest-platform/harvest/placer/agent/declarations"
	"github.com/harvest-platform/harvest/placer/agent/sequencer"
)

// loop is one of the placer's background passes: its name (in logs), how
// often it runs, and the pass. Every loop starts and stops the same way:
// a pass at start, then one per interval until the context ends; a failed
// pass is logged and the next one retries. A loop with wake also passes
// when its channel closes, at most once per gap.
type loop struct {
	name     string
	interval time.Duration
	pass     func(context.Context) error
	wake     func() <-chan struct{}
	gap      time.Duration
}

// loops are every background pass the configuration enables: the class
// refresh, the declarations' publishing, the history import, the stage
// sequencer behind the proxy, and the placement strategies (strategies.go).
func (a *Agent) loops() []loop {
	out := []loop{{name: "classes", interval: a.set.Interval, pass: func(ctx context.Context) error {
		_, _ = a.refresher.Refresh(ctx) // errors are logged and counted
		a.declared.Publish(ctx)         // nodes the refresh saw first get their values
		return nil
	}}}
	out = append(out, loop{name: "declarations", interval: declarations.Interval, pass: a.declared.Sync})
	if a.importer != nil {
		out = append(out, a.importer.loop())
	}
	if a.sequencer != nil {
		// woken when an allocation ends, so a stage starts once the one
		// before it is done, not at the next pass
		out = append(out, loop{name: "stages", interval: sequencer.Interval, pass: a.sequencer.Tick,
			wake: a.strategies.view.AllocationsChanged, gap: sequencer.Gap})
	}
	return append(out, a.strategies.loops...)
}

// startLoops starts the shared view's watch of Nomad and then every loop,
// until ctx ends; wait returns once every loop has.
func (a *Agent) startLoops(ctx context.Context) (wait func()) {
	a.strategies.view.Start(ctx, a.log.Named("watch"))
	return runLoops(ctx, a.log, a.loops())
}

// runLoops starts each loop until ctx ends; wait returns once all have.
func runLoops(ctx context.Context, log hclog.Logger, loops []loop) (wait func()) {
	var wg sync.WaitGroup
	for _, l := range loops {
		logger := log.Named(l.name)
		logger.Debug("loop started", "interval", l.interval)
		onErr := func(err error) { logger.Warn("pass failed", "error", err) }
		wg.Go(func() { periodic.EveryOrWoken(ctx, l.interval, l.gap, l.wake, l.pass, onErr) })
	}
	return wg.Wait
}
