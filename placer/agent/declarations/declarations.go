package declarations

// Tenant declarations (GET /v1/tenants, GET, PUT, DELETE
// /v1/tenants/{environment}/{function}): what an operator declares of a
// primary tenant — storage and the CPU and memory reserve of its nodes —
// one JSON document per tenant in Consul KV under tenantDeclarationsDir,
// published as node meta on the tenant's nodes by declsync.go (for
// operators; the driver reads its reserve and the blob front its nodes'
// storage from the documents themselves, see driver/declared.go and
// storage/front/declared.go). This file owns the documents and their
// routes; the shape, its checks and the readers are history/declare's
// (shared with the driver and the blob front).

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/placer/agent/reply"
)

// tenantDeclarationsDir holds one document per tenant, named
// <environment>/<function>, apart from the history's tenants/ keys.
const tenantDeclarationsDir = declare.TenantsDir

// TenantValues are what a tenant declares, the body of PUT
// /v1/tenants/{environment}/{function}; TenantDeclaration is a stored
// declaration, as GET returns it. Their shape and checks live in
// history/declare, which the driver reads them with too.
type (
	TenantValues      = declare.TenantValues
	TenantDeclaration = declare.Tenant
)

// parseTenantDeclaration reads and checks a PUT body.
func parseTenantDeclaration(data []byte) (TenantValues, error) {
	return declare.ParseTenantValues(data)
}

func tenantDocument(id history.TenantID) string { return declare.TenantDocument(id) }

// checkStored refuses a stored declaration that is not one of id.
func (d *Declared) checkStored(id history.TenantID, rec TenantDeclaration) error {
	if err := rec.Check(id); err != nil {
		return &history.CorruptError{Key: d.store.DocumentKey(tenantDocument(id)), Err: err}
	}
	return nil
}

// tenants reads every declaration by tenant ID; broken are the documents
// that do not decode or check (declare.ReadTenants, which the blob front
// reads them with too).
func (d *Declared) tenants(ctx context.Context) (decls map[string]TenantDeclaration, broken map[string]error, err error) {
	return declare.ReadTenants(ctx, d.store)
}

func pathTenant(r *http.Request) (history.TenantID, error) {
	id := history.TenantID{Environment: r.PathValue("environment"), Function: r.PathValue("function")}
	return id, id.Validate()
}

// TenantRoutes serves GET /v1/tenants and GET, PUT, DELETE
// /v1/tenants/{environment}/{function} on mux.
func (d *Declared) TenantRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+api.PathTenants, func(w http.ResponseWriter, r *http.Request) {
		decls, broken, err := d.tenants(r.Context())
		if err == nil && len(broken) > 0 {
			err = broken[slices.Sorted(maps.Keys(broken))[0]]
		}
		if err != nil {
			reply.Error(w, http.StatusInternalServerError, err)
			return
		}
		list := slices.SortedFunc(maps.Values(decls), func(a, b TenantDeclaration) int {
			return cmp.Compare(a.ID().String(), b.ID().String())
		})
		reply.JSON(w, http.StatusOK, map[string][]TenantDeclaration{"tenants": append([]TenantDeclaration{}, list...)})
	})
	mux.HandleFunc("GET "+api.PathTenants+"/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		id, err := pathTenant(r)
		if err != nil {
			reply.Error(w, http.StatusBadRequest, err)
			return
		}
		var rec TenantDeclaration
		ok, err := d.store.GetDocument(r.Context(), tenantDocument(id), &rec)
		if err == nil && ok {
			err = d.checkStored(id, rec)
		}
		switch {
		case err != nil:
			reply.Error(w, http.StatusInternalServerError, err)
		case !ok:
			reply.Error(w, http.StatusNotFound, fmt.Errorf("tenant %s is not declared", id))
		default:
			reply.JSON(w, http.StatusOK, rec)
		}
	})
	mux.HandleFunc("PUT "+api.PathTenants+"/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
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
			reply.Error(w, http.StatusBadRequest, err)
			return
		}
		if err := d.store.PutDocument(r.Context(), tenantDocument(id), rec); err != nil {
			reply.Error(w, http.StatusInternalServerError, err)
			return
		}
		d.Publish(r.Context())
		reply.JSON(w, http.StatusOK, rec)
	})
	mux.HandleFunc("DELETE "+api.PathTenants+"/{environment}/{function}", func(w http.ResponseWriter, r *http.Request) {
		id, err := pathTenant(r)
		if err != nil {
			reply.Error(w, http.StatusBadRequest, err)
			return
		}
		if err := d.store.DeleteDocument(r.Context(), tenantDocument(id)); err != nil {
			reply.Error(w, http.StatusInternalServerError, err)
			return
		}
		d.Publish(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
}
