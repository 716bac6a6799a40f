package kv

import (
	"context"
	"time"
)

// deadlined puts a deadline on every call to a KV.
type deadlined struct {
	kv      KV
	timeout time.Duration
}

// WithDeadline bounds every call to kv by timeout (a caller's earlier
// deadline still wins), so a stalled Consul fails a request instead of
// holding it.
func WithDeadline(kv KV, timeout time.Duration) KV { return &deadlined{kv: kv, timeout: timeout} }

func (d *deadlined) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.kv.Get(ctx, key)
}

func (d *deadlined) CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.kv.CAS(ctx, key, value, index)
}

func (d *deadlined) List(ctx context.Context, prefix string) ([]Pair, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.kv.List(ctx, prefix)
}

func (d *deadlined) Keys(ctx context.Context, prefix, sep string) ([]string, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.kv.Keys(ctx, prefix, sep)
}

func (d *deadlined) Delete(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.kv.Delete(ctx, key)
}

func (d *deadlined) DeleteCAS(ctx context.Context, key string, index uint64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.kv.DeleteCAS(ctx, key, index)
}

func (d *deadlined) Txn(ctx context.Context, ops []Op) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.kv.Txn(ctx, ops)
}
