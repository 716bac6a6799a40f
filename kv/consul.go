package kv

import (
	"context"
	"fmt"

	consulapi "github.com/hashicorp/consul/api"
)

// Consul is KV over a Consul agent's HTTP API.
type Consul struct {
	kv  *consulapi.KV
	txn *consulapi.Txn
}

var _ KV = (*Consul)(nil)

// NewConsul wraps a Consul client.
func NewConsul(c *consulapi.Client) *Consul { return &Consul{kv: c.KV(), txn: c.Txn()} }

func (c *Consul) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	p, _, err := c.kv.Get(key, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil || p == nil {
		return nil, 0, err
	}
	return p.Value, p.ModifyIndex, nil
}

func (c *Consul) CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error) {
	ok, _, err := c.kv.CAS(&consulapi.KVPair{Key: key, Value: value, ModifyIndex: index}, (&consulapi.WriteOptions{}).WithContext(ctx))
	return ok, err
}

func (c *Consul) List(ctx context.Context, prefix string) ([]Pair, error) {
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

func (c *Consul) Delete(ctx context.Context, key string) error {
	_, err := c.kv.Delete(key, (&consulapi.WriteOptions{}).WithContext(ctx))
	return err
}

func (c *Consul) DeleteCAS(ctx context.Context, key string, index uint64) (bool, error) {
	ok, _, err := c.kv.DeleteCAS(&consulapi.KVPair{Key: key, ModifyIndex: index}, (&consulapi.WriteOptions{}).WithContext(ctx))
	return ok, err
}

func (c *Consul) Txn(ctx context.Context, ops []Op) (bool, error) {
	if len(ops) > MaxOps {
		return false, ErrTooManyOps
	}
	txn := make(consulapi.KVTxnOps, len(ops))
	for i, op := range ops {
		txn[i] = &consulapi.KVTxnOp{Verb: consulapi.KVOp(op.Verb), Key: op.Key, Value: op.Value, Index: op.Index}
	}
	ok, resp, _, err := c.kv.Txn(txn, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return false, err
	}
	if !ok && resp != nil {
		// a failed check or CAS rolls the transaction back; anything else
		// (a malformed op) is the caller's bug and says so
		for _, e := range resp.Errors {
			if op := ops[e.OpIndex]; !isCheck(op.Verb) {
				return false, fmt.Errorf("kv: transaction op %d (%s %s): %s", e.OpIndex, op.Verb, op.Key, e.What)
			}
		}
	}
	return ok, nil
}

// isCheck reports whether a failure of the verb is a lost race, not a bug.
func isCheck(v Verb) bool {
	return v == CAS || v == DeleteCAS || v == CheckIndex || v == CheckNotExists
}
