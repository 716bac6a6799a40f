package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"
)

// countingNomad is a Nomad API serving a node list and node reads, counting
// the reads.
type countingNomad struct {
	mu    sync.Mutex
	index map[string]uint64
	reads int
}

func (f *countingNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/nodes":
		var stubs []nomadapi.NodeListStub
		for _, id := range []string{"n1", "n2"} {
			stubs = append(stubs, nomadapi.NodeListStub{ID: id, Name: id, ModifyIndex: f.index[id]})
		}
		json.NewEncoder(w).Encode(stubs)
	case strings.HasPrefix(r.URL.Path, "/v1/node/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/node/")
		f.reads++
		json.NewEncoder(w).Encode(nomadapi.Node{ID: id, Name: id, ModifyIndex: f.index[id], Status: "ready",
			SchedulingEligibility: "eligible", Meta: map[string]string{"harvest_tenant": "t/" + id}})
	default:
		http.NotFound(w, r)
	}
}

func (f *countingNomad) nodeReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func TestNodeCacheReadsOnlyChangedNodes(t *testing.T) {
	fake := &countingNomad{index: map[string]uint64{"n1": 5, "n2": 7}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	view := newClusterView(client)
	pass := func() int {
		t.Helper()
		before := fake.nodeReads()
		nodes, err := view.harvestedNodes(context.Background())
		if err != nil || len(nodes) != 2 || !nodes[0].Ready {
			t.Fatalf("nodes %+v, %v", nodes, err)
		}
		return fake.nodeReads() - before
	}
	if n := pass(); n != 2 {
		t.Fatalf("first pass read %d nodes, want 2", n)
	}
	if n := pass(); n != 0 {
		t.Fatalf("an unchanged cluster cost %d node reads, want 0", n)
	}
	fake.mu.Lock()
	fake.index["n2"] = 9 // e.g. its meta changed
	fake.mu.Unlock()
	if n := pass(); n != 1 {
		t.Fatalf("one changed node cost %d reads, want 1", n)
	}
}
