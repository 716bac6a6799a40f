package nodes

import (
	"context"
	"errors"
	"io"
	"time"
)

// DataBucket is the bucket every storage node keeps replicas in.
const DataBucket = "harvest-data"

// Timeouts bound every call the front makes, so that a stalled Consul or
// storage node fails the requests that need it instead of holding them.
type Timeouts struct {
	// Node bounds one call to a storage node (connect, and the answer's
	// headers), and how long a stream to or from a node may go without
	// progress. Default 10s.
	Node time.Duration
	// Consul bounds one Consul call. Default 5s.
	Consul time.Duration
	// Request bounds one S3 request's work (a body streaming with progress
	// included). Default 30m.
	Request time.Duration
	// Queue is how long a call waits for one of a node's slots (PoolOptions.
	// PerNode) before the request is refused with SlowDown. Default 5s.
	Queue time.Duration
	// Idle is how long a client's connection may go without sending or
	// taking a byte while its request body or the answer streams. Default 60s.
	Idle time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.Node, 10 * time.Second}, {&t.Consul, 5 * time.Second}, {&t.Request, 30 * time.Minute},
		{&t.Queue, 5 * time.Second}, {&t.Idle, time.Minute}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	return t
}

// ErrSaturated says a node had no free slot within Timeouts.Queue.
var ErrSaturated = errors.New("storage node has too many calls in flight")

// Acquire takes one of a node's slots for a call; the returned func gives
// it back. It waits at most Timeouts.Queue (back-pressure: the request is
// refused rather than queued without bound).
func (p *Pool) Acquire(ctx context.Context, id string) (func(), error) {
	p.mu.Lock()
	ch := p.slots[id]
	wait := p.timeouts.Queue
	p.mu.Unlock()
	if ch == nil {
		return nil, errors.New("unknown storage node " + id)
	}
	release := func() { <-ch }
	select {
	case ch <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ch <- struct{}{}:
		return release, nil
	case <-t.C:
		return nil, ErrSaturated
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Call runs fn against a node within one of its slots and the node
// timeout.
func (p *Pool) Call(ctx context.Context, id string, fn func(ctx context.Context) error) error {
	release, err := p.Acquire(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, p.timeouts.Node)
	defer cancel()
	return fn(ctx)
}

// Stall cancels a call that makes no progress for its timeout.
type Stall struct {
	t *time.Timer
	d time.Duration
}

// NewStall calls cancel once d passes without Touch.
func NewStall(d time.Duration, cancel func()) *Stall {
	return &Stall{t: time.AfterFunc(d, cancel), d: d}
}

// Touch says the call made progress.
func (s *Stall) Touch() { s.t.Reset(s.d) }

// Stop ends the watch.
func (s *Stall) Stop() { s.t.Stop() }

// ProgressReader touches its stall on every read that moves bytes.
type ProgressReader struct {
	R io.Reader
	S *Stall
}

func (p ProgressReader) Read(b []byte) (int, error) {
	n, err := p.R.Read(b)
	if n > 0 {
		p.S.Touch()
	}
	return n, err
}

// DefaultTimeouts fills in the defaults of what t leaves zero.
func DefaultTimeouts(t Timeouts) Timeouts { return t.withDefaults() }
