package agent

// Tenant declarations (GET /v1/tenants, GET, PUT, DELETE
// /v1/tenants/{environment}/{function}): what an operator declares of a
// primary tenant — storage and the CPU and memory reserve of its nodes —
// one JSON document per tenant in Consul KV under tenantDeclarationsDir,
// published as node meta on the tenant's nodes by declsync.go (for the
// driver and the blob tier; neither reads that meta yet). This file owns
// the shape, its checks, its documents and its routes.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/harvest-platform/harvest/history"
)

// tenantDeclarationsDir holds one document per tenant, named
// <environment>/<function>, apart from the history's tenants/ keys.
const tenantDeclarationsDir = "declarations/tenants/"

// TenantValues are what a tenant declares, the body of PUT
// /v1/tenants/{environment}/{function}. A field left out is not declared.
type TenantValues struct {
	StorageMB       *int64   `json:"storage_mb,omitempty"`
	ReserveCPU      *float64 `json:"reserve_cpu,omitempty"` // cores
	ReserveMemoryMB *int64   `json:"reserve_memory_mb,omitempty"`
}

// TenantDeclaration is a stored declaration, as GET returns it.
type TenantDeclaration struct {
	Environment string `json:"environment"`
	Function    string `json:"function"`
	TenantValues
}

// ID is the declared tenant.
func (d TenantDeclaration) ID() history.TenantID {
	return history.TenantID{Environment: d.Environment, Function: d.Function}
}

// parseTenantDeclaration reads and checks a PUT body.
func parseTenantDeclaration(data []byte) (TenantValues, error) {
	var v TenantValues
	if err := decodeStrict(data, &v); err != nil {
		return TenantValues{}, fmt.Errorf("declaration body: %w", err)
	}
	return v, v.validate()
}

func (v TenantValues) validate() error {
	if s := v.StorageMB; s != nil && *s < 0 {
		return fmt.Errorf("storage_mb %d: want a number >= 0", *s)
	}
	if m := v.ReserveMemoryMB; m != nil && *m < 0 {
		return fmt.Errorf("reserve_memory_mb %d: want a number >= 0", *m)
	}
	return nonNegative("reserve_cpu", v.ReserveCPU)
}

func tenantDocument(id history.TenantID) string { return tenantDeclarationsDir + id.String() }

// checkStored refuses a stored declaration that is not one of id.
func (d *declared) checkStored(id history.TenantID, rec TenantDeclaration) error {
	err := rec.validate()
	if err == nil && rec.ID() != id {
		err = fmt.Errorf("holds tenant %q", rec.ID())
	}
	if err != nil {
		return &history.CorruptError{Key: d.store.DocumentKey(tenantDocument(id)), Err: err}
	}
	return nil
}

// tenants reads every declaration by tenant ID; broken are the documents
// that do not decode or check (by tenant ID, or by key when the key names
// no tenant), so that one bad value leaves the others usable.
func (d *declared) tenants(ctx context.Context) (decls map[string]TenantDeclaration, broken map[string]error, err error) {
	docs, err := d.store.ListDocuments(ctx, tenantDeclarationsDir)
	if err != nil {
		return nil, nil, err
	}
	decls, broken = map[string]TenantDeclaration{}, map[string]error{}
	for _, doc := range docs {
		id, err := history.ParseTenantID(strings.TrimPrefix(doc.Name, tenantDeclarationsDir))
		if err != nil {
			broken[doc.Key] = &history.CorruptError{Key: doc.Key, Err: fmt.Errorf("key names no tenant: %w", err)}
			continue
		}
		var rec TenantDeclaration
		if err := doc.Decode(&rec); err != nil {
			broken[id.String()] = err
		} else if err := d.checkStored(id, rec); err != nil {
			broken[id.String()] = err
		} else {
			decls[id.String()] = rec
		}
	}
	return decls, broken, nil
}

func pathTenant(r *http.Request) (history.TenantID, error) {
	id := history.TenantID{Environment: r.PathValue("environment"), Function: r.PathValue("function")}
	return id, id.Validate()
}

func (d *declared) tenantRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/tenants", func(w http.ResponseWriter, r *http.Request) {
		decls, broken, err := d.tenants(r.Context())
		if err == nil && len(broken) > 0 {
			err = broken[slices.Sorted(maps.Keys(broken))[0]]
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		list := slices.SortedFunc(maps.Values(decls), func(a, b TenantDeclaration) int {
			return cmp.Compare(a.ID().String(), b.ID().String())
		})
		writeJSON(w, http.StatusOK, map[string][]TenantDeclaration{"tenants": append([]TenantDeclaration{}, list...)})
	})
	mux.HandleFunc("GET /v1/tenants/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		id, err := pathTenant(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		var rec TenantDeclaration
		ok, err := d.store.GetDocument(r.Context(), tenantDocument(id), &rec)
		if err == nil && ok {
			err = d.checkStored(id, rec)
		}
		switch {
		case err != nil:
			writeError(w, http.StatusInternalServerError, err)
		case !ok:
			writeError(w, http.StatusNotFound, fmt.Errorf("tenant %s is not declared", id))
		default:
			writeJSON(w, http.StatusOK, rec)
		}
	})
	mux.HandleFunc("PUT /v1/tenants/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		id, err := pathTenant(r)
		var body []byte
		if err == nil {
			body, err = readBody(w, r)
		}
		rec := TenantDeclaration{Environment: id.Environment, Function: id.Function}
		if err == nil {
			rec.TenantValues, err = parseTenantDeclaration(body)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		if err := d.store.PutDocument(r.Context(), tenantDocument(id), rec); err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		d.publish(r.Context())
		writeJSON(w, http.StatusOK, rec)
	})
	mux.HandleFunc("DELETE /v1/tenants/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		id, err := pathTenant(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		if err := d.store.DeleteDocument(r.Context(), tenantDocument(id)); err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		d.publish(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
}
