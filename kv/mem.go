package kv

import (
	"context"
	"sort"
	"strings"
	"sync"
)

// Mem is an in-memory KV with Consul's check-and-set, transaction and
// index semantics, for unit tests, offline commands and the simulator.
type Mem struct {
	mu     sync.Mutex
	next   uint64
	items  map[string]Pair
	graves map[string]uint64 // deleted keys and when, for the prefix's index
	ops    Ops
}

var _ KV = (*Mem)(nil)

// Ops counts a Mem's operations, for tests of how much a path costs.
type Ops struct{ Gets, CASes, Lists, Deletes int }

// NewMem returns an empty store.
func NewMem() *Mem { return &Mem{items: map[string]Pair{}, graves: map[string]uint64{}} }

// Ops returns the operations counted so far.
func (m *Mem) Ops() Ops {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

func (m *Mem) Get(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Gets++
	p, ok := m.items[key]
	if !ok {
		return nil, 0, nil
	}
	return append([]byte(nil), p.Value...), p.Index, nil
}

func (m *Mem) CAS(_ context.Context, key string, value []byte, index uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.CASes++
	return m.txnLocked([]Op{{Verb: CAS, Key: key, Value: value, Index: index}}), nil
}

func (m *Mem) List(_ context.Context, prefix string) ([]Pair, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Lists++
	return m.listLocked(prefix), nil
}

// ListIndex is List with the prefix's index (see Keys).
func (m *Mem) ListIndex(_ context.Context, prefix string) ([]Pair, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Lists++
	return m.listLocked(prefix), m.indexLocked(prefix), nil
}

func (m *Mem) listLocked(prefix string) []Pair {
	var out []Pair
	for k, p := range m.items {
		if strings.HasPrefix(k, prefix) {
			out = append(out, Pair{Key: k, Value: append([]byte(nil), p.Value...), Index: p.Index})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Keys lists the keys under prefix; deleted keys count in the index, as
// in Consul.
func (m *Mem) Keys(_ context.Context, prefix, sep string) ([]string, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for k := range m.items {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if sep != "" {
			if i := strings.Index(k[len(prefix):], sep); i >= 0 {
				k = k[:len(prefix)+i+len(sep)]
			}
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, m.indexLocked(prefix), nil
}

// indexLocked is the highest ModifyIndex under prefix, deletions included;
// as Consul, an empty prefix answers the whole store's index.
func (m *Mem) indexLocked(prefix string) uint64 {
	idx := uint64(0)
	for k, i := range m.graves {
		if strings.HasPrefix(k, prefix) {
			idx = max(idx, i)
		}
	}
	for k, p := range m.items {
		if strings.HasPrefix(k, prefix) {
			idx = max(idx, p.Index)
		}
	}
	if idx == 0 {
		idx = m.next
	}
	return idx
}

func (m *Mem) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Deletes++
	m.txnLocked([]Op{{Verb: Delete, Key: key}})
	return nil
}

func (m *Mem) DeleteCAS(_ context.Context, key string, index uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Deletes++
	return m.txnLocked([]Op{{Verb: DeleteCAS, Key: key, Index: index}}), nil
}

// DeleteTree deletes every key under prefix.
func (m *Mem) DeleteTree(_ context.Context, prefix string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Deletes++
	var ops []Op
	for k := range m.items {
		if strings.HasPrefix(k, prefix) {
			ops = append(ops, Op{Verb: Delete, Key: k})
		}
	}
	m.txnLocked(ops)
	return nil
}

// Txn checks every op first, then applies them all under one index.
func (m *Mem) Txn(_ context.Context, ops []Op) (bool, error) {
	if len(ops) > MaxOps {
		return false, ErrTooManyOps
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.txnLocked(ops), nil
}

func (m *Mem) txnLocked(ops []Op) bool {
	for _, op := range ops {
		cur, exists := m.items[op.Key]
		switch op.Verb {
		case CAS, CheckIndex:
			if cur.Index != op.Index {
				return false
			}
		case DeleteCAS:
			if !exists || cur.Index != op.Index {
				return false
			}
		case CheckNotExists:
			if exists {
				return false
			}
		}
	}
	m.next++
	for _, op := range ops {
		switch op.Verb {
		case Set, CAS:
			m.items[op.Key] = Pair{Key: op.Key, Value: append([]byte(nil), op.Value...), Index: m.next}
		case Delete, DeleteCAS:
			if _, ok := m.items[op.Key]; ok {
				delete(m.items, op.Key)
				m.graves[op.Key] = m.next
			}
		}
	}
	return true
}

// Put writes a value unconditionally (tests use it to plant values,
// corrupt ones too).
func (m *Mem) Put(key string, value []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.txnLocked([]Op{{Verb: Set, Key: key, Value: value}})
}
