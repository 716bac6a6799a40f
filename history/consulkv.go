package history

import (
	"context"

	consulapi "github.com/hashicorp/consul/api"
)

// ConsulKV adapts Consul's KV API to KV.
type ConsulKV struct{ kv *consulapi.KV }

var _ KV = (*ConsulKV)(nil)

// NewConsulKV wraps a Consul client.
func NewConsulKV(c *consulapi.Client) *ConsulKV { return &ConsulKV{kv: c.KV()} }

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

// ListIndex implements Lister.
func (c *ConsulKV) ListIndex(ctx context.Context, prefix string) ([]Pair, uint64, error) {
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
