package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
)

// watchWait is how long one blocking query waits for a change (Nomad caps
// it at 10 minutes): an unchanged cluster costs one request per list per
// watchWait.
const watchWait = 5 * time.Minute

// clusterWatch keeps Nomad's node, job and allocation lists as the loops
// read them, each fed by a blocking query: a list is read again only when
// Nomad's index for it moves, so a pass of any loop over an unchanged
// cluster costs no request, and a change costs one read of the list that
// changed, whatever the number of loops and however often they run.
// Before start (unit tests, harvestctl) every read goes to Nomad.
type clusterWatch struct {
	nodes  watchedList[[]*nomadapi.NodeListStub]
	jobs   watchedList[[]*nomadapi.JobListStub]
	allocs watchedList[[]*nomadapi.AllocationListStub]
}

func newClusterWatch(nomad *nomadapi.Client) *clusterWatch {
	return &clusterWatch{
		nodes: watchedList[[]*nomadapi.NodeListStub]{name: "nodes", fetch: func(q *nomadapi.QueryOptions) ([]*nomadapi.NodeListStub, *nomadapi.QueryMeta, error) {
			return nomad.Nodes().List(q)
		}},
		// every namespace, with meta (the harvest keys) and summaries
		jobs: watchedList[[]*nomadapi.JobListStub]{name: "jobs", fetch: func(q *nomadapi.QueryOptions) ([]*nomadapi.JobListStub, *nomadapi.QueryMeta, error) {
			q.Namespace, q.Params = "*", map[string]string{"meta": "true"}
			return nomad.Jobs().List(q)
		}},
		// every namespace, with resources and task states
		allocs: watchedList[[]*nomadapi.AllocationListStub]{name: "allocations", fetch: func(q *nomadapi.QueryOptions) ([]*nomadapi.AllocationListStub, *nomadapi.QueryMeta, error) {
			q.Namespace, q.Params = "*", map[string]string{"resources": "true", "task_states": "true"}
			return nomad.Allocations().List(q)
		}},
	}
}

// start begins the three blocking queries; they end with ctx.
func (w *clusterWatch) start(ctx context.Context, log hclog.Logger) {
	if w == nil {
		return
	}
	// running before start returns: a read right after waits for the
	// watch's first answer instead of going to Nomad itself
	w.nodes.begin()
	w.jobs.begin()
	w.allocs.begin()
	go w.nodes.watch(ctx, log)
	go w.jobs.watch(ctx, log)
	go w.allocs.watch(ctx, log)
}

// BlockingIndex is the WaitIndex of a blocking query after an answer at
// index: Nomad answers a list whose table was never written (no job or
// allocation yet) with index 0, and a query at index 0 never blocks, so a
// watch would ask again at once, forever (a whole core of the Nomad
// server and the watcher on a cluster with no jobs). It waits from 1
// instead; the first query (nothing answered yet) is a plain read.
func BlockingIndex(index uint64, answered bool) uint64 {
	if answered {
		return max(index, 1)
	}
	return index
}

// begin marks the list as watched.
func (l *watchedList[T]) begin() {
	l.mu.Lock()
	l.running, l.next = true, make(chan struct{})
	l.mu.Unlock()
}

// changed is closed at the list's next answer (nil while not watched).
func (l *watchedList[T]) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.running {
		return nil
	}
	return l.next
}

// watchedList is one list Nomad answers blocking queries for.
type watchedList[T any] struct {
	name  string
	fetch func(*nomadapi.QueryOptions) (T, *nomadapi.QueryMeta, error)

	mu      sync.Mutex
	running bool
	has     bool          // an answer came
	err     error         // the last query's failure, until one succeeds
	next    chan struct{} // closed at the next answer
	val     T
	index   uint64
}

// catchUp bounds how long a read waits for the watch to show a write
// (its index normally arrives within milliseconds): past it the list is
// read from Nomad directly, so a reader never hangs on an index that a
// Nomad version reports differently.
const catchUp = 10 * time.Second

// get returns the list: as last answered while the watch runs (waiting
// for the first answer, and for one at or past minIndex, the index of a
// write the caller made, at most catchUp), otherwise read from Nomad now.
func (l *watchedList[T]) get(ctx context.Context, minIndex uint64) (T, error) {
	late := time.NewTimer(catchUp)
	defer late.Stop()
	for {
		l.mu.Lock()
		running, has, v, index, next, err := l.running, l.has, l.val, l.index, l.next, l.err
		l.mu.Unlock()
		if !running {
			v, _, err := l.fetch((&nomadapi.QueryOptions{}).WithContext(ctx))
			return v, err
		}
		if err != nil { // Nomad unreachable: no pass acts on a list gone stale
			var zero T
			return zero, err
		}
		if has && index >= minIndex {
			return v, nil
		}
		select {
		case <-next:
		case <-late.C:
			v, _, err := l.fetch((&nomadapi.QueryOptions{}).WithContext(ctx))
			return v, err
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
}

// watch keeps the list current until ctx ends (after begin): a blocking query at the
// last index, answered when the list changes or watchWait passes; errors
// back off from 1 s to 30 s.
func (l *watchedList[T]) watch(ctx context.Context, log hclog.Logger) {
	defer func() {
		l.mu.Lock()
		l.running = false
		l.mu.Unlock()
	}()
	var index uint64
	answered := false
	backoff := time.Second
	for ctx.Err() == nil {
		v, meta, err := l.fetch((&nomadapi.QueryOptions{WaitIndex: BlockingIndex(index, answered), WaitTime: watchWait}).WithContext(ctx))
		changed := err == nil && (meta.LastIndex != index || !answered)
		answered = answered || err == nil
		l.mu.Lock()
		l.err = err
		if changed {
			// an index lower than before (a restored snapshot) is still
			// the right one to wait from
			l.val, l.index, l.has, index = v, meta.LastIndex, true, meta.LastIndex
		}
		if err != nil || changed { // waiters see the change, or the failure
			close(l.next)
			l.next = make(chan struct{})
		}
		l.mu.Unlock()
		if err == nil {
			backoff = time.Second
			continue
		}
		if ctx.Err() == nil {
			log.Warn("watching Nomad failed: retrying", "list", l.name, "error", err, "in", backoff)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}
