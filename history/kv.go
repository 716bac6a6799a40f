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
	mu     sync.Mutex
	next   uint64
	items  map[string]Pair
	graves map[string]uint64 // deleted keys and when, for Keys' index
	ops    KVOps
}

// KVOps counts a MemKV's operations, for tests of how much a path costs.
type KVOps struct{ Gets, CASes, Lists, Deletes int }

// Ops returns the operations counted so far.
func (m *MemKV) Ops() KVOps {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

var _ KV = (*MemKV)(nil)

// NewMemKV returns an empty store.
func NewMemKV() *MemKV { return &MemKV{items: map[string]Pair{}} }

func (m *MemKV) Get(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Gets++
	p, ok := m.items[key]
	if !ok {
		return nil, 0, nil
	}
	return append([]byte(nil), p.Value...), p.Index, nil
}

func (m *MemKV) CAS(_ context.Context, key string, value []byte, index uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.CASes++
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
	m.ops.Lists++
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
	m.ops.Deletes++
	m.deleteLocked(key)
	return nil
}

// Put writes a value unconditionally (tests use it to plant corrupt values).
func (m *MemKV) Put(key string, value []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	m.items[key] = Pair{Key: key, Value: value, Index: m.next}
}

// Lister is what the bulk reader and the sealer need of a KV beyond KV;
// ConsulKV and MemKV have it.
type Lister interface {
	// Keys lists the keys under prefix, each cut after the first sep past
	// the prefix (sep "" lists every key), and the prefix's index: the
	// highest ModifyIndex under it, deletions included, as Consul's
	// X-Consul-Index of the same list. An unchanged index means nothing
	// under the prefix changed.
	Keys(ctx context.Context, prefix, sep string) ([]string, uint64, error)
	// ListIndex is List with the prefix's index.
	ListIndex(ctx context.Context, prefix string) ([]Pair, uint64, error)
	// DeleteCAS deletes key only if its ModifyIndex is still index.
	DeleteCAS(ctx context.Context, key string, index uint64) (bool, error)
	// DeleteTree deletes every key under prefix.
	DeleteTree(ctx context.Context, prefix string) error
}

var _ Lister = (*MemKV)(nil)

// Keys implements Lister; deleted keys count in the index, as in Consul.
func (m *MemKV) Keys(_ context.Context, prefix, sep string) ([]string, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	idx := m.graveIndex(prefix)
	for k, p := range m.items {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		idx = max(idx, p.Index)
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
	if idx == 0 {
		idx = m.next // as Consul: an empty prefix answers the whole store's index
	}
	return out, idx, nil
}

// ListIndex implements Lister.
func (m *MemKV) ListIndex(ctx context.Context, prefix string) ([]Pair, uint64, error) {
	ps, _ := m.List(ctx, prefix)
	m.mu.Lock()
	idx := m.graveIndex(prefix)
	m.mu.Unlock()
	for _, p := range ps {
		idx = max(idx, p.Index)
	}
	if idx == 0 {
		m.mu.Lock()
		idx = m.next // as Consul: an empty prefix answers the whole store's index
		m.mu.Unlock()
	}
	return ps, idx, nil
}

// DeleteCAS implements Lister.
func (m *MemKV) DeleteCAS(_ context.Context, key string, index uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.items[key]; !ok || p.Index != index {
		return false, nil
	}
	m.deleteLocked(key)
	return true, nil
}

func (m *MemKV) deleteLocked(key string) {
	if _, ok := m.items[key]; !ok {
		return
	}
	delete(m.items, key)
	m.next++
	if m.graves == nil {
		m.graves = map[string]uint64{}
	}
	m.graves[key] = m.next
}

func (m *MemKV) graveIndex(prefix string) uint64 {
	idx := uint64(0)
	for k, i := range m.graves {
		if strings.HasPrefix(k, prefix) {
			idx = max(idx, i)
		}
	}
	return idx
}

// DeleteTree implements Lister.
func (m *MemKV) DeleteTree(_ context.Context, prefix string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops.Deletes++
	for k := range m.items {
		if strings.HasPrefix(k, prefix) {
			m.deleteLocked(k)
		}
	}
	return nil
}
