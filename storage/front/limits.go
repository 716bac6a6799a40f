package front

import (
	"context"
	"errors"
	"io"
	"time"
)

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
	// Queue is how long a call waits for one of a node's slots (NodesOptions.
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

// errNodeSaturated says a node had no free slot within Timeouts.Queue.
var errNodeSaturated = errors.New("storage node has too many calls in flight")

// acquire takes one of a node's slots for a call; the returned func gives
// it back. It waits at most Timeouts.Queue (back-pressure: the request is
// refused rather than queued without bound).
func (n *Nodes) acquire(ctx context.Context, id string) (func(), error) {
	n.mu.Lock()
	ch := n.slots[id]
	wait := n.timeouts.Queue
	n.mu.Unlock()
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
		return nil, errNodeSaturated
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stall cancels a call that makes no progress for its timeout.
type stall struct {
	t *time.Timer
	d time.Duration
}

func newStall(d time.Duration, cancel func()) *stall {
	return &stall{t: time.AfterFunc(d, cancel), d: d}
}

func (s *stall) touch() { s.t.Reset(s.d) }
func (s *stall) stop()  { s.t.Stop() }

// progressReader touches its stall on every read that moves bytes.
type progressReader struct {
	r io.Reader
	s *stall
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.s.touch()
	}
	return n, err
}

// nodeCall runs fn against a node within one of its slots and the node
// timeout.
func (b *Backend) nodeCall(ctx context.Context, node string, fn func(ctx context.Context) error) error {
	release, err := b.nodes.acquire(ctx, node)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, b.nodes.timeouts.Node)
	defer cancel()
	return fn(ctx)
}

// DefaultTimeouts fills in the defaults of what t leaves zero.
func DefaultTimeouts(t Timeouts) Timeouts { return t.withDefaults() }
