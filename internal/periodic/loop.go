// Package periodic runs the daemons' periodic work: a pass now or after a first
// interval, then every interval until the context ends, with each failure
// handed to the caller while the context lives (a pass cut short by the
// shutdown is not a failure).
package periodic

import (
	"context"
	"time"
)

// Every runs fn at once, then every interval until ctx ends. An error fn
// returns while ctx lives goes to onErr (nil: dropped).
func Every(ctx context.Context, interval time.Duration, fn func(context.Context) error, onErr func(error)) {
	run(ctx, interval, 0, true, nil, fn, onErr)
}

// After runs fn every interval until ctx ends, the first time one interval
// from now (the caller made the first pass itself).
func After(ctx context.Context, interval time.Duration, fn func(context.Context) error, onErr func(error)) {
	run(ctx, interval, 0, false, nil, fn, onErr)
}

// EveryOrWoken is Every, with a pass also as soon as the channel wake
// returned before the last pass closes (a change that pass may not have
// seen), but no sooner than gap after the last pass began, so a burst of
// changes costs one pass per gap. A nil wake, or a nil channel, never
// wakes.
func EveryOrWoken(ctx context.Context, interval, gap time.Duration, wake func() <-chan struct{}, fn func(context.Context) error, onErr func(error)) {
	run(ctx, interval, gap, true, wake, fn, onErr)
}

func run(ctx context.Context, interval, gap time.Duration, now bool, wake func() <-chan struct{}, fn func(context.Context) error, onErr func(error)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		var woken <-chan struct{}
		if wake != nil {
			woken = wake()
		}
		began := time.Now()
		if now {
			if err := fn(ctx); err != nil && ctx.Err() == nil && onErr != nil {
				onErr(err)
			}
		}
		now = true
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-woken:
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(began.Add(gap))):
			}
		}
	}
}
