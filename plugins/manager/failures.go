package manager

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

// ErrPluginDown is what a supervised plugin's calls return (wrapped, with the
// reason) between its failure and its restart.
var ErrPluginDown = errors.New("plugin is down")

// watchInterval is how often a running plugin's process is checked.
const watchInterval = 100 * time.Millisecond

// nextDelay is the backoff before the next attempt: restart_backoff doubled
// per failed attempt in a row, capped at restart_backoff_max, then jittered
// to between half and all of that. Call with mu held.
func (in *instance[T]) nextDelay() time.Duration {
	d := in.sup.RestartBackoff
	for i := 0; i < in.attempt && d < in.sup.RestartBackoffMax; i++ {
		d *= 2
	}
	d = min(d, in.sup.RestartBackoffMax)
	in.attempt++
	return d/2 + rand.N(d/2+1)
}

// watch notices the process exiting between calls.
func (in *instance[T]) watch(gen int, client *plugin.Client) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for range t.C {
		in.mu.Lock()
		current := in.gen == gen && in.up && !in.closed
		in.mu.Unlock()
		if !current {
			return
		}
		if client.Exited() {
			in.fail(gen, KindCrash, errors.New("the plugin process exited"))
			return
		}
	}
}

// report takes the outcome of a call made on launch gen: a crash or a hang
// takes the plugin down for a restart; the plugin's own error is counted.
func (in *instance[T]) report(ctx context.Context, gen int, err error) {
	if err == nil {
		return
	}
	in.mu.Lock()
	exited := in.gen == gen && in.client != nil && in.client.Exited()
	in.mu.Unlock()
	switch {
	case exited, status.Code(err) == codes.Unavailable, errors.Is(err, historyimporter.ErrTruncated):
		in.fail(gen, KindCrash, err)
	case errors.Is(err, context.DeadlineExceeded):
		in.fail(gen, KindHang, err)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil: // the caller gave up
	default:
		in.m.met.failures.WithLabelValues(in.cfg.Name, KindError).Inc()
		in.log.Warn("plugin call failed", "error", err)
	}
}

// fail takes launch gen down: kills its process and schedules a restart.
func (in *instance[T]) fail(gen int, kind string, err error) {
	in.mu.Lock()
	if in.closed || gen != in.gen || !in.up {
		in.mu.Unlock()
		return
	}
	in.up, in.lastErr = false, fmt.Errorf("%s: %w", kind, err)
	if time.Since(in.upSince) >= in.sup.RestartBackoffMax {
		in.attempt = 0 // it had been running well: start the backoff over
	}
	delay := in.nextDelay()
	client, cmd := in.client, in.cmd
	in.mu.Unlock()

	in.m.met.failures.WithLabelValues(in.cfg.Name, kind).Inc()
	in.m.met.up.WithLabelValues(in.cfg.Name).Set(0)
	in.log.Error("plugin down", "kind", kind, "error", err, "restart_in", delay)
	in.m.notify(in.state())
	go func() {
		if cmd.Process != nil { // a hung plugin would not stop when asked
			_ = cmd.Process.Kill()
		}
		client.Kill()
		in.mu.Lock()
		defer in.mu.Unlock()
		if !in.closed {
			in.timer = time.AfterFunc(delay, func() { in.start(true) })
		}
	}()
}
