package agent

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
)

// countingNomad is a Nomad API serving a node list, node reads (counted)
// and dynamic meta applies (recorded; each bumps the node's modify index).
type countingNomad struct {
	mu    sync.Mutex
	index map[string]uint64
	// meta is each node's meta (nil: nodes n1 and n2 of tenants t/n1 and
	// t/n2); down nodes have status down.
	meta    map[string]map[string]string
	down    map[string]bool
	reads   int
	applied []nomadapi.NodeMetaApplyRequest
	// coreMHz is the driver.harvest.core_mhz of the nodes the harvest
	// driver runs on (none: no node has the driver)
	coreMHz map[string]string
}

func (f *countingNomad) ids() []string {
	if f.meta == nil {
		return []string{"n1", "n2"}
	}
	return slices.Sorted(maps.Keys(f.meta))
}

func (f *countingNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/nodes":
		var stubs []nomadapi.NodeListStub
		for _, id := range f.ids() {
			stubs = append(stubs, nomadapi.NodeListStub{ID: id, Name: id, ModifyIndex: f.index[id]})
		}
		json.NewEncoder(w).Encode(stubs)
	case strings.HasPrefix(r.URL.Path, "/v1/node/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/node/")
		f.reads++
		meta, status := map[string]string{"harvest_tenant": "t/" + id}, "ready"
		if f.meta != nil {
			meta = maps.Clone(f.meta[id])
		}
		if f.down[id] {
			status = "down"
		}
		node := nomadapi.Node{ID: id, Name: id, ModifyIndex: f.index[id], Status: status, SchedulingEligibility: "eligible", Meta: meta}
		if mhz, ok := f.coreMHz[id]; ok {
			node.Attributes = map[string]string{contract.AttrCoreMHz: mhz}
			node.Drivers = map[string]*nomadapi.DriverInfo{contract.DriverName: {Detected: true, Healthy: true}}
		}
		json.NewEncoder(w).Encode(node)
	case r.URL.Path == "/v1/client/metadata" && r.Method == http.MethodPost:
		var req nomadapi.NodeMetaApplyRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || f.meta[req.NodeID] == nil || f.down[req.NodeID] {
			http.Error(w, "bad meta apply", http.StatusBadRequest)
			return
		}
		for k, v := range req.Meta {
			if v == nil {
				delete(f.meta[req.NodeID], k)
			} else {
				f.meta[req.NodeID][k] = *v
			}
		}
		f.index[req.NodeID]++
		f.applied = append(f.applied, req)
		json.NewEncoder(w).Encode(nomadapi.NodeMetaResponse{Meta: f.meta[req.NodeID]})
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

// The room device's core MHz is the least the harvest driver's nodes
// publish (a node without the driver does not count), read again only
// after coreMHzTTL.
func TestCoreMHzIsTheLeastOfTheDriversNodes(t *testing.T) {
	fake := &countingNomad{index: map[string]uint64{"n1": 1, "n2": 1, "n3": 1},
		meta: map[string]map[string]string{"n1": {}, "n2": {}, "n3": {}}, coreMHz: map[string]string{"n1": "2095", "n2": "1800"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &coreMHz{view: newClusterView(client), now: func() time.Time { return now }}
	if got, err := c.CoreMHz(context.Background()); err != nil || got != 1800 {
		t.Fatalf("core MHz %v, %v: want 1800", got, err)
	}
	fake.mu.Lock()
	fake.coreMHz["n2"], fake.index["n2"] = "2500", 2
	fake.mu.Unlock()
	if got, _ := c.CoreMHz(context.Background()); got != 1800 {
		t.Fatalf("within the TTL: %v, want the 1800 read before", got)
	}
	now = now.Add(coreMHzTTL)
	if got, _ := c.CoreMHz(context.Background()); got != 2095 {
		t.Fatalf("after the TTL: %v, want 2095 (n2 now 2500)", got)
	}
}
