package eventq

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"
)

type ev struct {
	t  int // few distinct times: many ties
	id int
}

func byTime(a, b ev) bool { return a.t < b.t }

// ref is the same order as a plain container/heap queue, the way the
// simulators used it before eventq.
type ref []ev

func (r ref) Len() int           { return len(r) }
func (r ref) Less(i, j int) bool { return r[i].t < r[j].t }
func (r ref) Swap(i, j int)      { r[i], r[j] = r[j], r[i] }
func (r *ref) Push(x any)        { *r = append(*r, x.(ev)) }
func (r *ref) Pop() any {
	x := (*r)[len(*r)-1]
	*r = (*r)[:len(*r)-1]
	return x
}

func TestPopsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := New(func(a, b ev) bool { return a.t < b.t || a.t == b.t && a.id < b.id })
	var want []ev
	for i := range 1000 {
		e := ev{t: rng.IntN(50), id: i}
		q.Push(e)
		want = append(want, e)
	}
	slices.SortFunc(want, func(a, b ev) int {
		if a.t != b.t {
			return a.t - b.t
		}
		return a.id - b.id
	})
	for i, w := range want {
		if q.Peek() != w {
			t.Fatalf("pop %d: peek %v, want %v", i, q.Peek(), w)
		}
		if got := q.Pop(); got != w {
			t.Fatalf("pop %d: %v, want %v", i, got, w)
		}
	}
	if q.Len() != 0 {
		t.Fatalf("%d left", q.Len())
	}
}

// TestTiesAsContainerHeap: with ties left to the heap, interleaved pushes
// and pops give exactly the sequence heap.Push and heap.Pop give, so a
// simulator moved onto Queue keeps its output.
func TestTiesAsContainerHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	q := New(byTime)
	var r ref
	for i := range 5000 {
		if r.Len() > 0 && rng.IntN(3) == 0 {
			want := heap.Pop(&r).(ev)
			if got := q.Pop(); got != want {
				t.Fatalf("step %d: popped %v, container/heap pops %v", i, got, want)
			}
			continue
		}
		e := ev{t: rng.IntN(8), id: i}
		q.Push(e)
		heap.Push(&r, e)
	}
	for r.Len() > 0 {
		if got, want := q.Pop(), heap.Pop(&r).(ev); got != want {
			t.Fatalf("draining: popped %v, container/heap pops %v", got, want)
		}
	}
}

func TestPopReleasesValue(t *testing.T) {
	q := New(func(a, b *int) bool { return *a < *b })
	x, y := 1, 2
	q.Push(&y)
	q.Push(&x)
	if q.Pop() != &x || q.Len() != 1 {
		t.Fatal("popped the wrong value")
	}
	if s := q.s[:2]; s[1] != nil {
		t.Fatal("the popped slot still points at the value")
	}
}

func BenchmarkPushPop(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	q := New(byTime)
	for i := range 1000 {
		q.Push(ev{t: rng.IntN(1 << 20), id: i})
	}
	for b.Loop() {
		e := q.Pop()
		e.t += rng.IntN(1 << 10)
		q.Push(e)
	}
}
