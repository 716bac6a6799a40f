package kv

import (
	"context"
	"sort"
	"strings"
	"sync"
)

// Mem is an in-memory KV with Consul's check-and-set and transaction
// semantics, for unit tests and offline commands.
type Mem struct {
	mu    sync.Mutex
	next  uint64
	items map[string]Pair
}

var _ KV = (*Mem)(nil)

// NewMem returns an empty store.
func NewMem() *Mem { return &Mem{items: map[string]Pair{}} }

func (m *Mem) Get(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.items[key]
	if !ok {
		return nil, 0, nil
	}
	return append([]byte(nil), p.Value...), p.Index, nil
}

func (m *Mem) CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error) {
	return m.Txn(ctx, []Op{{Verb: CAS, Key: key, Value: value, Index: index}})
}

func (m *Mem) List(_ context.Context, prefix string) ([]Pair, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Pair
	for k, p := range m.items {
		if strings.HasPrefix(k, prefix) {
			out = append(out, Pair{Key: k, Value: append([]byte(nil), p.Value...), Index: p.Index})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (m *Mem) Keys(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.items {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *Mem) Delete(ctx context.Context, key string) error {
	_, err := m.Txn(ctx, []Op{{Verb: Delete, Key: key}})
	return err
}

func (m *Mem) DeleteCAS(ctx context.Context, key string, index uint64) (bool, error) {
	return m.Txn(ctx, []Op{{Verb: DeleteCAS, Key: key, Index: index}})
}

// Txn checks every op first, then applies them all under one index.
func (m *Mem) Txn(_ context.Context, ops []Op) (bool, error) {
	if len(ops) > MaxOps {
		return false, ErrTooManyOps
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, op := range ops {
		cur, exists := m.items[op.Key]
		switch op.Verb {
		case CAS, CheckIndex:
			if cur.Index != op.Index {
				return false, nil
			}
		case DeleteCAS:
			if !exists || cur.Index != op.Index {
				return false, nil
			}
		case CheckNotExists:
			if exists {
				return false, nil
			}
		}
	}
	m.next++
	for _, op := range ops {
		switch op.Verb {
		case Set, CAS:
			m.items[op.Key] = Pair{Key: op.Key, Value: append([]byte(nil), op.Value...), Index: m.next}
		case Delete, DeleteCAS:
			delete(m.items, op.Key)
		}
	}
	return true, nil
}

// Put writes a value unconditionally (tests use it to plant values).
func (m *Mem) Put(key string, value []byte) {
	_, _ = m.Txn(context.Background(), []Op{{Verb: Set, Key: key, Value: value}})
}
