// Package eventq is the event queue of the simulators' discrete-event
// loops: a min-queue of values ordered by a less function, a binary heap.
//
// Push and Pop move elements exactly as container/heap's Push and Pop do
// (the same comparisons, the same final positions), so values that tie
// under less come out in an order fixed by the sequence of pushes and pops
// alone: a run is deterministic. A simulator whose results must not depend
// on that sequence breaks its ties in less. Unlike container/heap they
// call less directly and move a hole instead of swapping through an
// interface: the event loops spend much of their time here.
package eventq

// Queue is a min-queue of T. Make one with New.
type Queue[T any] struct {
	s    []T
	less func(a, b T) bool
}

// New returns an empty queue ordered by less (a strict weak order: less(a,
// b) means a comes out before b).
func New[T any](less func(a, b T) bool) *Queue[T] { return &Queue[T]{less: less} }

// Len is the number of values queued.
func (q *Queue[T]) Len() int { return len(q.s) }

// Peek returns the least value without removing it; the queue must not be
// empty.
func (q *Queue[T]) Peek() T { return q.s[0] }

// Push adds x, sifting it up from the last index (heap.Push).
func (q *Queue[T]) Push(x T) {
	q.s = append(q.s, x)
	j := len(q.s) - 1
	for j > 0 {
		i := (j - 1) / 2
		if !q.less(x, q.s[i]) {
			break
		}
		q.s[j] = q.s[i]
		j = i
	}
	q.s[j] = x
}

// Pop removes and returns the least value, sifting the last one down from
// the root (heap.Pop); the queue must not be empty.
func (q *Queue[T]) Pop() T {
	s := q.s
	top, n := s[0], len(s)-1
	x := s[n]
	var zero T
	s[n] = zero // release what the popped value points to
	s = s[:n]
	q.s = s
	if n == 0 {
		return top
	}
	i := 0
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && q.less(s[j2], s[j]) {
			j = j2
		}
		if !q.less(s[j], x) {
			break
		}
		s[i] = s[j]
		i = j
	}
	s[i] = x
	return top
}
