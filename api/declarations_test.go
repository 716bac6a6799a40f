package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/history/declare"
)

// A fake placer with the declarations routes as the placer's mux spells
// them: the client must reach each with its method and path.
func TestDeclarationCallsUseThePlacersRoutes(t *testing.T) {
	tenants := map[string]declare.Tenant{}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/tenants/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		d := declare.Tenant{Environment: r.PathValue("environment"), Function: r.PathValue("function")}
		if err := json.NewDecoder(r.Body).Decode(&d.TenantValues); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tenants[d.Environment+"/"+d.Function] = d
		_ = json.NewEncoder(w).Encode(d)
	})
	mux.HandleFunc("GET /v1/tenants/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := tenants[r.PathValue("environment")+"/"+r.PathValue("function")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(d)
	})
	mux.HandleFunc("DELETE /v1/tenants/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		delete(tenants, r.PathValue("environment")+"/"+r.PathValue("function"))
	})
	var policy *declare.Policy
	mux.HandleFunc("PUT /v1/policy", func(w http.ResponseWriter, r *http.Request) {
		policy = &declare.Policy{}
		_ = json.NewDecoder(r.Body).Decode(policy)
		_ = json.NewEncoder(w).Encode(policy)
	})
	mux.HandleFunc("GET /v1/policy", func(w http.ResponseWriter, r *http.Request) {
		if policy == nil {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(policy)
	})
	mux.HandleFunc("DELETE /v1/policy", func(w http.ResponseWriter, r *http.Request) { policy = nil })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := Placer(strings.TrimPrefix(srv.URL, "http://"))
	ctx := context.Background()

	cpu := 2.5
	got, err := c.PutTenant(ctx, "prod", "web search", declare.TenantValues{ReserveCPU: &cpu})
	if err != nil || got.Function != "web search" || got.ReserveCPU == nil || *got.ReserveCPU != 2.5 {
		t.Fatalf("PutTenant: %+v, %v (a function name with a space must reach the route whole)", got, err)
	}
	if read, err := c.Tenant(ctx, "prod", "web search"); err != nil || *read.ReserveCPU != 2.5 {
		t.Fatalf("Tenant: %+v, %v", read, err)
	}
	if err := c.DeleteTenant(ctx, "prod", "web search"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tenant(ctx, "prod", "web search"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a deleted tenant: %v, want ErrNotFound", err)
	}

	if _, err := c.Policy(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no policy yet: %v, want ErrNotFound", err)
	}
	strength := 0.4
	if p, err := c.PutPolicy(ctx, declare.Policy{PeriodicStrength: &strength}); err != nil || p.PeriodicStrength == nil || *p.PeriodicStrength != 0.4 {
		t.Fatalf("PutPolicy: %+v, %v", p, err)
	}
	if p, err := c.Policy(ctx); err != nil || *p.PeriodicStrength != 0.4 {
		t.Fatalf("Policy: %+v, %v", p, err)
	}
	if err := c.DeletePolicy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Policy(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a deleted policy: %v, want ErrNotFound", err)
	}
}
