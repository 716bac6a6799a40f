package agent

import (
	"context"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/agent/declarations"
)

// declaredValues is each node's published declaration meta.
func declaredValues(f *nomadtest.CountingNomad) map[string]map[string]string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := map[string]map[string]string{}
	for id, meta := range f.Meta {
		out[id] = map[string]string{}
		for _, k := range []string{declarations.StorageMBKey, declarations.ReserveCPUKey, declarations.ReserveMemoryMBKey} {
			if v, ok := meta[k]; ok {
				out[id][k] = v
			}
		}
	}
	return out
}

func TestDeclarationsArePublishedOnTheirTenantsNodesOnly(t *testing.T) {
	a, kv, _ := newTestAgent(t)
	tenant := func(id string) map[string]string { return map[string]string{"harvest_tenant": id, "other": "kept"} }
	fake := &nomadtest.CountingNomad{Index: map[string]uint64{}, Down: map[string]bool{"n5": true}, Meta: map[string]map[string]string{
		"n1": tenant("search/frontend"), "n2": tenant("search/frontend"), "n3": tenant("ads/indexer"),
		"n4": {"other": "no tenant"}, "n5": tenant("search/frontend"),
	}}
	nomad := httptest.NewServer(fake)
	defer nomad.Close()
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: nomad.URL})
	if err != nil {
		t.Fatal(err)
	}
	a.setupDeclarations(cluster.New(client))
	srv := httptest.NewServer(a.routes())
	defer srv.Close()

	none := map[string]string{}
	steps := []struct {
		method, path, body string
		want               map[string]map[string]string
	}{
		{"PUT", "/v1/tenants/search/frontend", `{"storage_mb":10240,"reserve_cpu":0.5}`, map[string]map[string]string{
			"n1": {declarations.StorageMBKey: "10240", declarations.ReserveCPUKey: "0.5"}, "n2": {declarations.StorageMBKey: "10240", declarations.ReserveCPUKey: "0.5"},
			"n3": none, "n4": none, "n5": none}},
		// the policy's reserves reach every harvested node whose tenant declares none
		{"PUT", "/v1/policy", `{"reserve_cpu":1,"reserve_memory_mb":256,"replicas":3}`, map[string]map[string]string{
			"n1": {declarations.StorageMBKey: "10240", declarations.ReserveCPUKey: "0.5", declarations.ReserveMemoryMBKey: "256"},
			"n2": {declarations.StorageMBKey: "10240", declarations.ReserveCPUKey: "0.5", declarations.ReserveMemoryMBKey: "256"},
			"n3": {declarations.ReserveCPUKey: "1", declarations.ReserveMemoryMBKey: "256"}, "n4": none, "n5": none}},
		// undeclaring a value removes it, or falls back to the policy's
		{"PUT", "/v1/tenants/search/frontend", `{"storage_mb":20480}`, map[string]map[string]string{
			"n1": {declarations.StorageMBKey: "20480", declarations.ReserveCPUKey: "1", declarations.ReserveMemoryMBKey: "256"},
			"n2": {declarations.StorageMBKey: "20480", declarations.ReserveCPUKey: "1", declarations.ReserveMemoryMBKey: "256"},
			"n3": {declarations.ReserveCPUKey: "1", declarations.ReserveMemoryMBKey: "256"}, "n4": none, "n5": none}},
		{"DELETE", "/v1/tenants/search/frontend", "", map[string]map[string]string{
			"n1": {declarations.ReserveCPUKey: "1", declarations.ReserveMemoryMBKey: "256"}, "n2": {declarations.ReserveCPUKey: "1", declarations.ReserveMemoryMBKey: "256"},
			"n3": {declarations.ReserveCPUKey: "1", declarations.ReserveMemoryMBKey: "256"}, "n4": none, "n5": none}},
		{"DELETE", "/v1/policy", "", map[string]map[string]string{"n1": none, "n2": none, "n3": none, "n4": none, "n5": none}},
	}
	for _, s := range steps {
		if code, body := call(t, srv, s.method, s.path, s.body); code/100 != 2 {
			t.Fatalf("%s %s: %d %s", s.method, s.path, code, body)
		}
		if got := declaredValues(fake); !maps.EqualFunc(got, s.want, maps.Equal) {
			t.Fatalf("after %s %s %s:\n got %v\nwant %v", s.method, s.path, s.body, got, s.want)
		}
	}
	fake.Mu.Lock()
	applied, n1 := fake.Applied, maps.Clone(fake.Meta["n1"])
	fake.Mu.Unlock()
	for _, req := range applied {
		if req.NodeID == "n4" || req.NodeID == "n5" {
			t.Fatalf("meta applied to %s (no tenant, or down)", req.NodeID)
		}
		if _, ok := req.Meta["other"]; ok || len(req.Meta) == 0 {
			t.Fatalf("apply touches keys it does not own, or none: %v", req.Meta)
		}
	}
	if n1["other"] != "kept" {
		t.Fatalf("other meta lost: %v", n1)
	}

	// a node that joins (or comes back up) gets its tenant's values on the next pass
	call(t, srv, "PUT", "/v1/tenants/ads/indexer", `{"reserve_memory_mb":128}`)
	fake.Mu.Lock()
	fake.Meta["n6"] = tenant("ads/indexer")
	delete(fake.Down, "n5")
	fake.Index["n5"]++
	fake.Mu.Unlock()
	if err := a.declared.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := declaredValues(fake)
	if got["n6"][declarations.ReserveMemoryMBKey] != "128" || len(got["n5"]) != 0 || got["n3"][declarations.ReserveMemoryMBKey] != "128" {
		t.Fatalf("after a node joined: %v", got)
	}
	applies := func() int {
		fake.Mu.Lock()
		defer fake.Mu.Unlock()
		return len(fake.Applied)
	}
	before := applies()
	if err := a.declared.Sync(context.Background()); err != nil || applies() != before {
		t.Fatalf("a pass over a cluster in line applied %d changes (%v)", applies()-before, err)
	}

	// a corrupt declaration leaves its tenant's nodes alone, the others are served
	call(t, srv, "PUT", "/v1/tenants/search/frontend", `{"storage_mb":1}`)
	kv.Put("harvest/declarations/tenants/search/frontend", []byte("garbage"))
	call(t, srv, "PUT", "/v1/tenants/ads/indexer", `{"reserve_memory_mb":64}`)
	err = a.declared.Sync(context.Background())
	if got := declaredValues(fake); err == nil || !strings.Contains(err.Error(), "harvest/declarations/tenants/search/frontend") ||
		got["n3"][declarations.ReserveMemoryMBKey] != "64" || got["n1"][declarations.StorageMBKey] != "1" {
		t.Fatalf("corrupt declaration: %v, %v", err, got)
	}
}
