package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/harvest-platform/harvest/history/declare"
)

// The placer's declarations API: the policy document (GET, PUT, DELETE
// /v1/policy) and one declaration per primary tenant (GET, PUT, DELETE
// /v1/tenants/{environment}/{function}), in history/declare's shapes. A
// missing document is ErrNotFound.

// Policy is the placer's policy document.
func (c Client) Policy(ctx context.Context) (declare.Policy, error) {
	var p declare.Policy
	err := c.Do(ctx, http.MethodGet, PathPolicy, nil, &p)
	return p, err
}

// PutPolicy replaces the policy document and returns it as stored.
func (c Client) PutPolicy(ctx context.Context, p declare.Policy) (declare.Policy, error) {
	var got declare.Policy
	err := c.Do(ctx, http.MethodPut, PathPolicy, p, &got)
	return got, err
}

// DeletePolicy removes the policy document: the defaults apply again.
func (c Client) DeletePolicy(ctx context.Context) error {
	return c.Do(ctx, http.MethodDelete, PathPolicy, nil, nil)
}

// Tenant is one primary tenant's declaration.
func (c Client) Tenant(ctx context.Context, environment, function string) (declare.Tenant, error) {
	var t declare.Tenant
	err := c.Do(ctx, http.MethodGet, tenantPath(environment, function), nil, &t)
	return t, err
}

// PutTenant declares a tenant's values and returns the declaration as
// stored.
func (c Client) PutTenant(ctx context.Context, environment, function string, v declare.TenantValues) (declare.Tenant, error) {
	var got declare.Tenant
	err := c.Do(ctx, http.MethodPut, tenantPath(environment, function), v, &got)
	return got, err
}

// DeleteTenant removes a tenant's declaration.
func (c Client) DeleteTenant(ctx context.Context, environment, function string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(environment, function), nil, nil)
}

func tenantPath(environment, function string) string {
	return PathTenants + "/" + url.PathEscape(environment) + "/" + url.PathEscape(function)
}
