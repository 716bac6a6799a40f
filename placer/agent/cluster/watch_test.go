package cluster

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/agent/cluster/clustertest"
)

// The watch answers from its last blocking query, waits for one that
// shows a write the caller made, and fails reads while Nomad is gone.
func TestWatchedListFollowsNomadAndSaysWhenItCannot(t *testing.T) {
	fake := clustertest.NewScaleNomad(3, 2)
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

	fake.CompleteAlloc(1)
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
