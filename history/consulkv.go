package history

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	consulapi "github.com/hashicorp/consul/api"
)

// ConsulKV adapts Consul's KV API to KV.
type ConsulKV struct {
	kv  *consulapi.KV
	txn *consulapi.Txn
}

var _ KV = (*ConsulKV)(nil)

// NewConsulKV wraps a Consul client.
func NewConsulKV(c *consulapi.Client) *ConsulKV { return &ConsulKV{kv: c.KV(), txn: c.Txn()} }

func (c *ConsulKV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	p, _, err := c.kv.Get(key, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil || p == nil {
		return nil, 0, err
	}
	return p.Value, p.ModifyIndex, nil
}

func (c *ConsulKV) CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error) {
	ok, _, err := c.kv.CAS(&consulapi.KVPair{Key: key, Value: value, ModifyIndex: index}, (&consulapi.WriteOptions{}).WithContext(ctx))
	return ok, err
}

func (c *ConsulKV) List(ctx context.Context, prefix string) ([]Pair, error) {
	ps, _, err := c.kv.List(prefix, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]Pair, len(ps))
	for i, p := range ps {
		out[i] = Pair{Key: p.Key, Value: p.Value, Index: p.ModifyIndex}
	}
	return out, nil
}

func (c *ConsulKV) Delete(ctx context.Context, key string) error {
	_, err := c.kv.Delete(key, (&consulapi.WriteOptions{}).WithContext(ctx))
	return err
}

var _ Lister = (*ConsulKV)(nil)

// Keys implements Lister with GET ?keys&separator=, whose X-Consul-Index is
// the highest ModifyIndex under the prefix (tombstones included).
func (c *ConsulKV) Keys(ctx context.Context, prefix, sep string) ([]string, uint64, error) {
	ks, meta, err := c.kv.Keys(prefix, sep, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	return ks, meta.LastIndex, nil
}

// ListIndex implements Lister: the prefix's keys and index in one request,
// then their values in read-only transactions of readOps keys each,
// readers at a time. One ?recurse list of a sealed day is ~10 MB of JSON
// that the server builds in one buffer (a day of 10,000 tenants' own keys
// the same); transactions keep every answer near a megabyte, so a refresh
// of a datacenter's month leaves the server less garbage to grow into.
// The reads are not one snapshot: a key written after the key list is
// read at its new value and an index above the prefix's, so the next
// refresh reads the prefix again; a key deleted after it (a sealer that
// folded it into new bundles, which the list may not name) makes the
// whole list start again, and after listAttempts such races it is read in
// one ?recurse list, which is a snapshot.
func (c *ConsulKV) ListIndex(ctx context.Context, prefix string) ([]Pair, uint64, error) {
	for range listAttempts {
		out, index, complete, err := c.listByTransactions(ctx, prefix)
		if err != nil || complete {
			return out, index, err
		}
	}
	ps, meta, err := c.kv.List(prefix, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	out := make([]Pair, len(ps))
	for i, p := range ps {
		out[i] = Pair{Key: p.Key, Value: p.Value, Index: p.ModifyIndex}
	}
	return out, meta.LastIndex, nil
}

// listAttempts is how often ListIndex lists by transactions before it
// falls back to one list.
const listAttempts = 3

// listByTransactions is one attempt of ListIndex; complete is false when a
// listed key was gone by the time it was read.
func (c *ConsulKV) listByTransactions(ctx context.Context, prefix string) ([]Pair, uint64, bool, error) {
	keys, index, err := c.Keys(ctx, prefix, "")
	if err != nil {
		return nil, 0, false, err
	}
	chunks := (len(keys) + readOps - 1) / readOps
	got := make([][]Pair, chunks)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readers)
	for i := range chunks {
		chunk := keys[i*readOps : min(len(keys), (i+1)*readOps)]
		g.Go(func() (err error) {
			got[i], err = c.read(gctx, chunk)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, false, err
	}
	out := make([]Pair, 0, len(keys))
	for _, ps := range got {
		out = append(out, ps...)
	}
	return out, index, len(out) == len(keys), nil
}

const (
	readOps = 16 // keys a read transaction carries: 16 sealed bundles are about a megabyte
	readers = 4  // read transactions of one list in flight
)

// read reads keys in one read-only transaction (no Raft write); keys that
// no longer exist are left out.
func (c *ConsulKV) read(ctx context.Context, keys []string) ([]Pair, error) {
	ops := make(consulapi.TxnOps, len(keys))
	for i, k := range keys {
		ops[i] = &consulapi.TxnOp{KV: &consulapi.KVTxnOp{Verb: consulapi.KVGetOrEmpty, Key: k}}
	}
	ok, resp, _, err := c.txn.Txn(ops, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("read transaction failed: %v", resp.Errors)
	}
	out := make([]Pair, 0, len(keys))
	for _, r := range resp.Results {
		if r.KV != nil && r.KV.ModifyIndex != 0 {
			out = append(out, Pair{Key: r.KV.Key, Value: r.KV.Value, Index: r.KV.ModifyIndex})
		}
	}
	return out, nil
}

// DeleteCAS implements Lister.
func (c *ConsulKV) DeleteCAS(ctx context.Context, key string, index uint64) (bool, error) {
	ok, _, err := c.kv.DeleteCAS(&consulapi.KVPair{Key: key, ModifyIndex: index}, (&consulapi.WriteOptions{}).WithContext(ctx))
	return ok, err
}

// DeleteTree implements Lister.
func (c *ConsulKV) DeleteTree(ctx context.Context, prefix string) error {
	_, err := c.kv.DeleteTree(prefix, (&consulapi.WriteOptions{}).WithContext(ctx))
	return err
}

// txnOps is how many operations one Consul transaction carries: the limit
// of older servers (1.22 takes 128).
const txnOps = 64

// DeleteCASBatch deletes each pair's key if its ModifyIndex is unchanged,
// 64 to a transaction; a transaction that a concurrent write rolled back
// is retried key by key, so the others still go.
func (c *ConsulKV) DeleteCASBatch(ctx context.Context, pairs []Pair) (int, error) {
	n := 0
	for len(pairs) > 0 {
		chunk := pairs[:min(txnOps, len(pairs))]
		pairs = pairs[len(chunk):]
		ops := make(consulapi.TxnOps, len(chunk))
		for i, p := range chunk {
			ops[i] = &consulapi.TxnOp{KV: &consulapi.KVTxnOp{Verb: consulapi.KVDeleteCAS, Key: p.Key, Index: p.Index}}
		}
		ok, _, _, err := c.txn.Txn(ops, (&consulapi.QueryOptions{}).WithContext(ctx))
		if err != nil {
			return n, err
		}
		if ok {
			n += len(chunk)
			continue
		}
		for _, p := range chunk {
			ok, err := c.DeleteCAS(ctx, p.Key, p.Index)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
	}
	return n, nil
}

// ConsulConfig is a Consul client configuration for history readers:
// Consul's gzip of HTTP answers is turned off, since history values are
// already zstd-compressed (gzip only spent CPU on both ends of a cold read).
func ConsulConfig(address, token string) *consulapi.Config {
	c := consulapi.DefaultConfig()
	c.Address, c.Token = address, token
	c.Transport.DisableCompression = true
	return c
}
