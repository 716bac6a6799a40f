// Package kvtest owns test doubles of the blob tier's KV: a wrapper that
// injects the failures a real Consul can produce, above all a write that
// commits and then answers with an error (the answer lost on the way
// back), which is what makes a catalogue write ambiguous.
package kvtest

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/harvest-platform/harvest/kv"
)

// ErrLost is the error a Faulty KV answers with.
var ErrLost = errors.New("kvtest: connection reset after the request was sent")

// Mode is how a write matching a Fault fails.
type Mode int

const (
	// CommitThenError applies the write, then answers ErrLost.
	CommitThenError Mode = iota
	// ErrorWithoutCommit answers ErrLost and writes nothing.
	ErrorWithoutCommit
)

// Fault makes the next Times writes (CAS, DeleteCAS, Delete, Txn) touching a
// key with Prefix fail as Mode says.
type Fault struct {
	Prefix string
	Mode   Mode
	Times  int
	// ThenFailReads makes every read fail once the fault was injected
	// (Consul gone right after the write), until FailReads(false).
	ThenFailReads bool
}

// Faulty wraps a KV and injects faults into its writes; reads pass through
// unless ReadsFail is set.
type Faulty struct {
	kv.KV
	mu        sync.Mutex
	faults    []*Fault
	readsFail bool
	// Injected counts the faults injected so far.
	Injected int
}

// NewFaulty wraps inner.
func NewFaulty(inner kv.KV) *Faulty { return &Faulty{KV: inner} }

// Add arms a fault.
func (f *Faulty) Add(fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := fault
	f.faults = append(f.faults, &c)
}

// FailReads makes every read fail (true) or pass (false).
func (f *Faulty) FailReads(fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.readsFail = fail
}

// take returns the armed fault for a write touching keys, if any.
func (f *Faulty) take(keys ...string) (Mode, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fault := range f.faults {
		if fault.Times <= 0 {
			continue
		}
		for _, k := range keys {
			if strings.HasPrefix(k, fault.Prefix) {
				fault.Times--
				f.Injected++
				if fault.ThenFailReads {
					f.readsFail = true
				}
				return fault.Mode, true
			}
		}
	}
	return 0, false
}

func (f *Faulty) reads() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.readsFail {
		return ErrLost
	}
	return nil
}

func (f *Faulty) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	if err := f.reads(); err != nil {
		return nil, 0, err
	}
	return f.KV.Get(ctx, key)
}

func (f *Faulty) List(ctx context.Context, prefix string) ([]kv.Pair, error) {
	if err := f.reads(); err != nil {
		return nil, err
	}
	return f.KV.List(ctx, prefix)
}

func (f *Faulty) Keys(ctx context.Context, prefix, sep string) ([]string, uint64, error) {
	if err := f.reads(); err != nil {
		return nil, 0, err
	}
	return f.KV.Keys(ctx, prefix, sep)
}

func (f *Faulty) CAS(ctx context.Context, key string, value []byte, index uint64) (bool, error) {
	return f.Txn(ctx, []kv.Op{{Verb: kv.CAS, Key: key, Value: value, Index: index}})
}

func (f *Faulty) DeleteCAS(ctx context.Context, key string, index uint64) (bool, error) {
	return f.Txn(ctx, []kv.Op{{Verb: kv.DeleteCAS, Key: key, Index: index}})
}

func (f *Faulty) Delete(ctx context.Context, key string) error {
	_, err := f.Txn(ctx, []kv.Op{{Verb: kv.Delete, Key: key}})
	return err
}

func (f *Faulty) Txn(ctx context.Context, ops []kv.Op) (bool, error) {
	keys := make([]string, len(ops))
	for i, op := range ops {
		keys[i] = op.Key
	}
	mode, faulted := f.take(keys...)
	if !faulted {
		return f.KV.Txn(ctx, ops)
	}
	if mode == CommitThenError {
		_, _ = f.KV.Txn(ctx, ops)
	}
	return false, ErrLost
}

// Reset disarms every fault and lets reads pass.
func (f *Faulty) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults, f.readsFail = nil, false
}
