// Package kv owns Harvest's access to Consul KV, for every component: the
// Consul adapter (reads, check-and-set writes and deletes, atomic
// transactions over several keys, key lists with the prefix's index, bulk
// reads by read-only transactions), the in-memory store with the same
// semantics that unit tests, offline commands and the simulator use, a
// wrapper that puts a deadline on every call, and (kvtest) a wrapper that
// injects Consul's failures. The tenant history (history.KV, history.Lister)
// and the blob tier (KV) each name the slice they need; both are served by
// Consul and Mem here. Every linearisation point of the blob tier (a
// catalogue entry's check-and-set, an upload's claim, a completion that
// retires the upload and writes the entry at once) is one call here.
package kv

import (
	"context"
	"errors"
)

// Pair is one key and value from List; Index is its ModifyIndex.
type Pair struct {
	Key   string
	Value []byte
	Index uint64
}

// Verb is what one operation of a transaction does.
type Verb string

const (
	// Set writes Value whatever the key holds.
	Set Verb = "set"
	// CAS writes Value if the key's ModifyIndex is Index (0: only if absent).
	CAS Verb = "cas"
	// DeleteCAS deletes the key if its ModifyIndex is Index.
	DeleteCAS Verb = "delete-cas"
	// Delete deletes the key whatever it holds.
	Delete Verb = "delete"
	// CheckIndex fails the transaction unless the key's ModifyIndex is Index.
	CheckIndex Verb = "check-index"
	// CheckNotExists fails the transaction if the key exists.
	CheckNotExists Verb = "check-not-exists"
)

// Op is one operation of a transaction.
type Op struct {
	Verb  Verb
	Key   string
	Value []byte
	Index uint64
}

// KV is what the blob tier needs of Consul KV. Index 0 from Get means the
// key is absent. CAS with index 0 creates only if absent. Txn applies every
// op or none: false (and no error) when a check failed. An error from a
// write does not say the write did not happen: the caller must read back
// to learn what is stored (the commit may have succeeded before the
// answer was lost).
type KV interface {
	Get(ctx context.Context, key string) (value []byte, index uint64, err error)
	CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error)
	List(ctx context.Context, prefix string) ([]Pair, error)
	Delete(ctx context.Context, key string) error
	// Keys lists the keys under prefix, in order, without their values,
	// each cut after the first sep past the prefix (sep "" lists every
	// key), and the prefix's index: the highest ModifyIndex under it,
	// deletions included, as Consul's X-Consul-Index of the same list.
	Keys(ctx context.Context, prefix, sep string) ([]string, uint64, error)
	DeleteCAS(ctx context.Context, key string, index uint64) (bool, error)
	Txn(ctx context.Context, ops []Op) (bool, error)
}

// ErrTooManyOps is the answer to a transaction Consul would refuse.
var ErrTooManyOps = errors.New("kv: a transaction holds at most 64 operations")

// MaxOps is Consul's limit on operations in one transaction.
const MaxOps = 64
