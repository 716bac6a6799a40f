// Package eventq is the event queue of the simulators' discrete-event
// loops: a min-queue of values ordered by a less function, on
// container/heap.
//
// Push and Pop move elements exactly as heap.Push and heap.Pop do, so
// values that tie under less come out in an order fixed by the sequence of
// pushes and pops alone: a run is deterministic. A simulator whose results
// must not depend on that sequence breaks its ties in less. Unlike
// heap.Push and heap.Pop, they do not pass values through an interface, so
// they do not allocate.
package eventq

import "container/heap"

// Queue is a min-queue of T. Make one with New.
type Queue[T any] struct{ h items[T] }

// New returns an empty queue ordered by less (a strict weak order: less(a,
// b) means a comes out before b).
func New[T any](less func(a, b T) bool) *Queue[T] {
	return &Queue[T]{h: items[T]{less: less}}
}

// Len is the number of values queued.
func (q *Queue[T]) Len() int { return len(q.h.s) }

// Peek returns the least value without removing it; the queue must not be
// empty.
func (q *Queue[T]) Peek() T { return q.h.s[0] }

// Push adds x.
func (q *Queue[T]) Push(x T) {
	q.h.s = append(q.h.s, x)
	heap.Fix(&q.h, len(q.h.s)-1) // at the last index Fix only sifts up: heap.Push
}

// Pop removes and returns the least value; the queue must not be empty.
func (q *Queue[T]) Pop() T {
	s := q.h.s
	top, n := s[0], len(s)-1
	var zero T
	s[0], s[n] = s[n], zero // zero: release what the popped value points to
	q.h.s = s[:n]
	heap.Fix(&q.h, 0) // at the root Fix only sifts down: heap.Pop
	return top
}

// items is the heap.Interface under Queue. Its Push and Pop are there for
// the interface: Queue appends and truncates by itself.
type items[T any] struct {
	s    []T
	less func(a, b T) bool
}

func (h *items[T]) Len() int           { return len(h.s) }
func (h *items[T]) Less(i, j int) bool { return h.less(h.s[i], h.s[j]) }
func (h *items[T]) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *items[T]) Push(x any)         { h.s = append(h.s, x.(T)) }
func (h *items[T]) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
