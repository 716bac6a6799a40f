package declare

import (
	"fmt"

	"github.com/harvest-platform/harvest/history"
)

// TenantsDir holds one declaration per tenant, named
// <environment>/<function>, apart from the history's tenants/ keys.
const TenantsDir = "declarations/tenants/"

// TenantDocument is the document name (under the store's prefix) of id's
// declaration.
func TenantDocument(id history.TenantID) string { return TenantsDir + id.String() }

// TenantValues are what a tenant declares, the body of the placer's PUT
// /v1/tenants/{environment}/{function}. A field left out is not declared.
// Memory is in MB as Nomad counts it (MiB).
type TenantValues struct {
	StorageMB       *int64   `json:"storage_mb,omitempty"`
	ReserveCPU      *float64 `json:"reserve_cpu,omitempty"` // cores
	ReserveMemoryMB *int64   `json:"reserve_memory_mb,omitempty"`
}

// Tenant is a stored declaration: the tenant and its values.
type Tenant struct {
	Environment string `json:"environment"`
	Function    string `json:"function"`
	TenantValues
}

// ID is the declared tenant.
func (d Tenant) ID() history.TenantID {
	return history.TenantID{Environment: d.Environment, Function: d.Function}
}

// ParseTenantValues reads and checks a declaration body (strict JSON: no
// unknown field, nothing after the object).
func ParseTenantValues(data []byte) (TenantValues, error) {
	var v TenantValues
	if err := DecodeStrict(data, &v); err != nil {
		return TenantValues{}, fmt.Errorf("declaration body: %w", err)
	}
	return v, v.Validate()
}

// Validate refuses negative amounts.
func (v TenantValues) Validate() error {
	if s := v.StorageMB; s != nil && *s < 0 {
		return fmt.Errorf("storage_mb %d: want a number >= 0", *s)
	}
	if m := v.ReserveMemoryMB; m != nil && *m < 0 {
		return fmt.Errorf("reserve_memory_mb %d: want a number >= 0", *m)
	}
	return NonNegative("reserve_cpu", v.ReserveCPU)
}

// Check refuses a stored declaration whose values do not validate or that
// is not one of id (the tenant its key names). Callers report the error as
// a *history.CorruptError naming the key.
func (d Tenant) Check(id history.TenantID) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if d.ID() != id {
		return fmt.Errorf("holds tenant %q", d.ID())
	}
	return nil
}
