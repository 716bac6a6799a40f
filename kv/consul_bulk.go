package kv

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	consulapi "github.com/hashicorp/consul/api"
)

// Keys is GET ?keys&separator=, whose X-Consul-Index is
// the highest ModifyIndex under the prefix (tombstones included).
func (c *Consul) Keys(ctx context.Context, prefix, sep string) ([]string, uint64, error) {
	ks, meta, err := c.kv.Keys(prefix, sep, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	return ks, meta.LastIndex, nil
}

// ListIndex is List with the prefix's index (see Keys): the prefix's keys and index in one request,
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
func (c *Consul) ListIndex(ctx context.Context, prefix string) ([]Pair, uint64, error) {
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
func (c *Consul) listByTransactions(ctx context.Context, prefix string) ([]Pair, uint64, bool, error) {
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
func (c *Consul) read(ctx context.Context, keys []string) ([]Pair, error) {
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

// DeleteTree deletes every key under prefix.
func (c *Consul) DeleteTree(ctx context.Context, prefix string) error {
	_, err := c.kv.DeleteTree(prefix, (&consulapi.WriteOptions{}).WithContext(ctx))
	return err
}

// txnOps is how many operations one Consul transaction carries: the limit
// of older servers (1.22 takes 128).
const txnOps = MaxOps

// DeleteCASBatch deletes each pair's key if its ModifyIndex is unchanged,
// 64 to a transaction; a transaction that a concurrent write rolled back
// is retried key by key, so the others still go.
func (c *Consul) DeleteCASBatch(ctx context.Context, pairs []Pair) (int, error) {
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
