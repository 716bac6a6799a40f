package history

import (
	"context"

	"github.com/harvest-platform/harvest/kv"
)

// KV is the slice of Consul's KV API the store needs. Index 0 from Get
// means the key is absent; CAS with index 0 creates only if absent.
// kv.Consul and kv.Mem serve it.
type KV interface {
	Get(ctx context.Context, key string) (value []byte, index uint64, err error)
	CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error)
	List(ctx context.Context, prefix string) ([]Pair, error)
	Delete(ctx context.Context, key string) error
}

// Pair is one key and value from List.
type Pair = kv.Pair

// Lister is what the bulk reader and the sealer need of a KV beyond KV;
// kv.Consul and kv.Mem have it.
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

var (
	_ KV     = (*kv.Mem)(nil)
	_ Lister = (*kv.Mem)(nil)
	_ KV     = (*kv.Consul)(nil)
	_ Lister = (*kv.Consul)(nil)
)
