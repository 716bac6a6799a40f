package declare

// Source says which document a declared reserve comes from.
type Source string

// The sources of a declared reserve; "" when neither declares it.
const (
	FromTenant Source = "tenant"
	FromPolicy Source = "policy"
)

// ReserveCPU is the CPU reserve (cores) declared for a tenant's nodes: the
// tenant's own (t, nil when undeclared), else the policy's (p, nil when
// absent), else nil.
func ReserveCPU(t *TenantValues, p *Policy) (*float64, Source) {
	switch {
	case t != nil && t.ReserveCPU != nil:
		return t.ReserveCPU, FromTenant
	case p != nil && p.ReserveCPU != nil:
		return p.ReserveCPU, FromPolicy
	}
	return nil, ""
}

// ReserveMemoryMB is the memory reserve (MB as Nomad counts it: MiB)
// declared for a tenant's nodes, with the same precedence as ReserveCPU.
func ReserveMemoryMB(t *TenantValues, p *Policy) (*int64, Source) {
	switch {
	case t != nil && t.ReserveMemoryMB != nil:
		return t.ReserveMemoryMB, FromTenant
	case p != nil && p.ReserveMemoryMB != nil:
		return p.ReserveMemoryMB, FromPolicy
	}
	return nil, ""
}
