package front

import (
	"context"
	"io"
	"time"
)

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
	release, err := b.nodes.Acquire(ctx, node)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, b.timeouts.Node)
	defer cancel()
	return fn(ctx)
}
