package periodic

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// Every makes its first pass at once; After waits a whole interval, so a
// loop ended before its first tick made none.
func TestEveryPassesAtOnceAndAfterWaits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var passes atomic.Int32
	done := make(chan struct{})
	go func() {
		Every(ctx, time.Hour, func(context.Context) error {
			if passes.Add(1) == 1 {
				cancel()
			}
			return nil
		}, nil)
		close(done)
	}()
	<-done
	if n := passes.Load(); n != 1 {
		t.Fatalf("Every made %d passes before its first tick, want 1", n)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	passes.Store(0)
	After(ctx, time.Hour, func(context.Context) error { passes.Add(1); return nil }, nil)
	if n := passes.Load(); n != 0 {
		t.Fatalf("After made %d passes before its first interval", n)
	}
}

// Passes repeat every interval; a failure reaches onErr, but not one that
// comes with the context's end.
func TestPassesRepeatAndFailuresReachOnErr(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var passes atomic.Int32
	var failures []error
	boom := errors.New("boom")
	Every(ctx, time.Millisecond, func(context.Context) error {
		switch passes.Add(1) {
		case 1:
			return boom
		case 3:
			cancel()
			return errors.New("cut short by the shutdown")
		}
		return nil
	}, func(err error) { failures = append(failures, err) })
	if n := passes.Load(); n != 3 {
		t.Fatalf("%d passes, want 3 (the loop ends with its context)", n)
	}
	if len(failures) != 1 || !errors.Is(failures[0], boom) {
		t.Fatalf("failures %v, want only the first pass's", failures)
	}
}

// A woken loop passes again before its interval, once per change it was
// woken for, and never sooner than its gap after the pass before.
func TestEveryOrWokenPassesOnAChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan chan struct{}, 1)
	next := make(chan struct{})
	changes <- next
	wake := func() <-chan struct{} {
		select {
		case c := <-changes:
			return c
		default:
			return nil // no change coming
		}
	}
	var passes atomic.Int32
	passed := make(chan int32, 10)
	go EveryOrWoken(ctx, time.Hour, 0, wake, func(context.Context) error { passed <- passes.Add(1); return nil }, nil)
	if n := <-passed; n != 1 {
		t.Fatalf("first pass %d", n)
	}
	close(next) // a change after the first pass
	if n := <-passed; n != 2 {
		t.Fatalf("pass %d after the change, want the second", n)
	}
	select {
	case n := <-passed:
		t.Fatalf("pass %d without a change or a tick", n)
	case <-time.After(50 * time.Millisecond):
	}

	// woken at every pass, the gap still holds the loop: one pass
	ctx2, cancel2 := context.WithCancel(context.Background())
	closed := make(chan struct{})
	close(closed)
	var held atomic.Int32
	done := make(chan struct{})
	go func() {
		EveryOrWoken(ctx2, time.Hour, time.Hour, func() <-chan struct{} { return closed }, func(context.Context) error {
			held.Add(1)
			return nil
		}, nil)
		close(done)
	}()
	for held.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	cancel2()
	<-done
	if n := held.Load(); n != 1 {
		t.Fatalf("%d passes within a gap of an hour, want 1", n)
	}
}
