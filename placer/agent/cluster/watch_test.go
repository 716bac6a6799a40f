package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/nomadtest"
)

// The watch answers from its last blocking query, waits for one that
// shows a write the caller made, and fails reads while Nomad is gone.
func TestWatchedListFollowsNomadAndSaysWhenItCannot(t *testing.T) {
	fake := nomadtest.NewScaleNomad(3, 2)
	srv := httptest.NewServer(fake)
	client, _ := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	defer srv.Close()
	defer cancel()
	w := newClusterWatch(client)

	// not started: every read goes to Nomad
	if allocs, err := w.allocs.get(ctx, 0); err != nil || len(allocs) != 4 {
		t.Fatalf("direct read: %d allocations, %v", len(allocs), err)
	}
	if w.allocs.changed() != nil {
		t.Fatal("a list not watched says it will change")
	}
	w.start(ctx, hclog.NewNullLogger())
	if _, err := w.allocs.get(ctx, 0); err != nil {
		t.Fatal(err)
	}
	reads := fake.Snapshot()["GET /v1/allocations"] + fake.Snapshot()["GET /v1/allocations (blocking)"]
	for range 20 {
		if _, err := w.allocs.get(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	if now := fake.Snapshot()["GET /v1/allocations"] + fake.Snapshot()["GET /v1/allocations (blocking)"]; now > reads+1 {
		t.Fatalf("20 reads of an unchanged list cost %d requests", now-reads)
	}

	changed := w.allocs.changed()
	fake.CompleteAlloc(1)
	select {
	case <-changed: // the change wakes whoever waits for it
	case <-time.After(10 * time.Second):
		t.Fatal("a completed allocation did not close the change channel within 10 s")
	}
	written := fake.ListIndex("allocs")
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	allocs, err := w.allocs.get(wctx, written)
	wcancel()
	if err != nil || allocs[1].ClientStatus != "complete" {
		t.Fatalf("after a write at index %d: %v, %v; want the completed allocation", written, allocs, err)
	}

	fake.GoDown()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := w.allocs.get(ctx, 0); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("reads still answered 10 s after Nomad went down")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Nomad answers a list whose table was never written (no job yet) with
// index 0, and a query at index 0 does not block: after its first answer
// the watch asks from index 1, so it waits for a change instead of asking
// again at once, forever.
func TestWatchOfAListNeverWrittenBlocks(t *testing.T) {
	var mu sync.Mutex
	var indexes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/jobs" { // the nodes and allocations are watched too
			mu.Lock()
			indexes = append(indexes, r.URL.Query().Get("index"))
			mu.Unlock()
		}
		if r.URL.Query().Get("index") != "" { // a blocking query: as Nomad, wait for a change that never comes
			<-r.Context().Done()
			return
		}
		w.Header().Set("X-Nomad-Index", "0")
		w.Write([]byte("[]"))
	}))
	defer srv.Close()
	client, _ := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	w := newClusterWatch(client)
	w.start(ctx, hclog.NewNullLogger())
	if jobs, err := w.jobs.get(ctx, 0); err != nil || len(jobs) != 0 {
		t.Fatalf("jobs %v, %v: want the empty list", jobs, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(indexes)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	srv.CloseClientConnections()
	mu.Lock()
	defer mu.Unlock()
	if len(indexes) < 2 || indexes[0] != "" || indexes[1] != "1" {
		t.Fatalf("queries at indexes %q: want a plain read, then a blocking query from 1", indexes)
	}
}

func TestBlockingIndex(t *testing.T) {
	for _, c := range []struct {
		index    uint64
		answered bool
		want     uint64
	}{{0, false, 0}, {0, true, 1}, {7, true, 7}, {7, false, 7}} {
		if got := BlockingIndex(c.index, c.answered); got != c.want {
			t.Errorf("BlockingIndex(%d, %v) = %d, want %d", c.index, c.answered, got, c.want)
		}
	}
}
