package proxy

import (
	"sync/atomic"

	"github.com/harvest-platform/harvest/placer/selectclass"
)

// LiveWeights are Algorithm 1's weights while the placer runs: the placer
// swaps them whole when its policy document changes, and every rewrite
// reads the current set without a lock. A stored set is never modified
// afterwards, so a reader may keep using the one it loaded.
type LiveWeights struct {
	p atomic.Pointer[selectclass.Weights]
}

// NewLiveWeights starts with w.
func NewLiveWeights(w selectclass.Weights) *LiveWeights {
	l := &LiveWeights{}
	l.Store(w)
	return l
}

// Load returns the current weights.
func (l *LiveWeights) Load() selectclass.Weights { return *l.p.Load() }

// Store replaces the weights; the caller must not modify w afterwards.
func (l *LiveWeights) Store(w selectclass.Weights) { l.p.Store(&w) }
