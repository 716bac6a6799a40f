package history

import (
	"context"
	"sort"
	"strings"
	"sync"
)

// KV is the slice of Consul's KV API the store needs. Index 0 from Get
// means the key is absent; CAS with index 0 creates only if absent.
type KV interface {
	Get(ctx context.Context, key string) (value []byte, index uint64, err error)
	CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error)
	List(ctx context.Context, prefix string) ([]Pair, error)
	Delete(ctx context.Context, key string) error
}

// Pair is one key and value from List.
type Pair struct {
	Key   string
	Value []byte
	Index uint64
}

// MemKV is an in-memory KV with Consul's check-and-set semantics, for unit
// tests, offline commands and the simulator.
type MemKV struct {
	mu    sync.Mutex
	next  uint64
	items map[string]Pair
}

var _ KV = (*MemKV)(nil)

// NewMemKV returns an empty store.
func NewMemKV() *MemKV { return &MemKV{items: map[string]Pair{}} }

func (m *MemKV) Get(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.items[key]
	if !ok {
		return nil, 0, nil
	}
	return append([]byte(nil), p.Value...), p.Index, nil
}

func (m *MemKV) CAS(_ context.Context, key string, value []byte, index uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items[key].Index != index {
		return false, nil
	}
	m.next++
	m.items[key] = Pair{Key: key, Value: append([]byte(nil), value...), Index: m.next}
	return true, nil
}

func (m *MemKV) List(_ context.Context, prefix string) ([]Pair, error) {
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

func (m *MemKV) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, key)
	return nil
}

// Put writes a value unconditionally (tests use it to plant corrupt values).
func (m *MemKV) Put(key string, value []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	m.items[key] = Pair{Key: key, Value: value, Index: m.next}
}
