package agent

import (
	"context"
	"time"
)

// loop is one of the placer's background passes: its name (in logs), how
// often it runs, and the pass. Every loop starts and stops the same way:
// a pass at start, then one per interval until the context ends; a failed
// pass is logged and the next one retries.
type loop struct {
	name     string
	interval time.Duration
	pass     func(context.Context) error
}

// loops are every background pass the configuration enables: the class
// refresh, the declarations' publishing, the stage sequencer behind the
// proxy, and the policies (policies.go).
func (a *Agent) loops() []loop {
	out := []loop{{"classes", a.set.interval, func(ctx context.Context) error {
		_, _ = a.refresher.Refresh(ctx) // errors are logged and counted
		a.declared.publish(ctx)         // nodes the refresh saw first get their values
		return nil
	}}}
	out = append(out, loop{"declarations", declarationsInterval, a.declared.sync})
	if a.sequencer != nil {
		out = append(out, loop{"stages", a.sequencer.interval, a.sequencer.tick})
	}
	return append(out, a.policies.loops...)
}

// startLoops starts the shared view's watch of Nomad and then every loop,
// until ctx ends.
func (a *Agent) startLoops(ctx context.Context) {
	a.policies.view.watch.start(ctx, a.log.Named("watch"))
	for _, l := range a.loops() {
		logger := a.log.Named(l.name)
		logger.Debug("loop started", "interval", l.interval)
		go every(ctx, l.interval, l.pass, func(err error) { logger.Warn("pass failed", "error", err) })
	}
}
