package declare

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

// TestReadersNameTheCorruptKey: absent documents read as nil, stored ones
// as stored, and a value that does not decode or check is a
// *history.CorruptError naming its key; ReadTenants keeps the good ones
// beside the broken.
func TestReadersNameTheCorruptKey(t *testing.T) {
	ctx := context.Background()
	kv := kv.NewMem()
	store := history.NewStore(kv, "h/")
	id := history.TenantID{Environment: "search", Function: "frontend"}
	if p, err := ReadPolicy(ctx, store); p != nil || err != nil {
		t.Fatalf("no policy: %v %v", p, err)
	}
	if v, err := ReadTenant(ctx, store, id); v != nil || err != nil {
		t.Fatalf("no declaration: %v %v", v, err)
	}
	two, mb := 2, int64(100)
	if err := store.PutDocument(ctx, PolicyName, Policy{Replicas: &two}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutDocument(ctx, TenantDocument(id), Tenant{Environment: "search", Function: "frontend",
		TenantValues: TenantValues{StorageMB: &mb}}); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadPolicy(ctx, store); err != nil || *p.Replicas != 2 {
		t.Fatalf("policy: %+v %v", p, err)
	}
	if v, err := ReadTenant(ctx, store, id); err != nil || *v.StorageMB != 100 {
		t.Fatalf("declaration: %+v %v", v, err)
	}
	kv.Put("h/declarations/policy", []byte(`{"diversity":"loose"}`))
	kv.Put("h/declarations/tenants/ads/frontend", []byte(`{"environment":"search","function":"frontend"}`))
	kv.Put("h/declarations/tenants/odd", []byte(`{}`))
	var corrupt *history.CorruptError
	if _, err := ReadPolicy(ctx, store); !errors.As(err, &corrupt) || corrupt.Key != "h/declarations/policy" {
		t.Fatalf("a bad diversity: %v", err)
	}
	if _, err := ReadTenant(ctx, store, history.TenantID{Environment: "ads", Function: "frontend"}); !errors.As(err, &corrupt) ||
		!strings.Contains(err.Error(), `holds tenant "search/frontend"`) {
		t.Fatalf("another tenant's declaration: %v", err)
	}
	decls, broken, err := ReadTenants(ctx, store)
	if err != nil || len(decls) != 1 || *decls["search/frontend"].StorageMB != 100 || len(broken) != 2 ||
		broken["ads/frontend"] == nil || broken["h/declarations/tenants/odd"] == nil {
		t.Fatalf("ReadTenants: %v %v %v", decls, broken, err)
	}
}

func TestFailureLogLogsEachDifferentFailureOnce(t *testing.T) {
	var f FailureLog
	a, b := errors.New("a"), errors.New("b")
	var logged []bool
	for _, err := range []error{nil, a, a, b, a, nil, nil, a} {
		logged = append(logged, f.Note(err))
	}
	want := []bool{false, true, false, true, true, true, false, true}
	for i := range want {
		if logged[i] != want[i] {
			t.Fatalf("logged %v, want %v", logged, want)
		}
	}
	if f.Failures != 5 || f.Failing != 1 {
		t.Fatalf("failures %d, failing %d", f.Failures, f.Failing)
	}
}
