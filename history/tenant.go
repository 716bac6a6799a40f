package history

import (
	"fmt"
	"regexp"
	"strings"
)

// TenantID names a primary tenant: an (environment, machine function) pair,
// written "environment/function" (the harvest_tenant node meta).
type TenantID struct {
	Environment string
	Function    string
}

// namePart is what an environment or function may be: it becomes part of a
// KV key, so no slashes, no dots alone, nothing a path could misread.
var namePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// ParseTenantID parses "environment/function".
func ParseTenantID(s string) (TenantID, error) {
	env, fn, ok := strings.Cut(s, "/")
	if !ok {
		return TenantID{}, fmt.Errorf("tenant %q: want environment/function", s)
	}
	id := TenantID{Environment: env, Function: fn}
	return id, id.Validate()
}

// Validate checks both parts are safe key segments.
func (t TenantID) Validate() error {
	for _, p := range []struct{ what, v string }{{"environment", t.Environment}, {"function", t.Function}} {
		if !namePart.MatchString(p.v) {
			return fmt.Errorf("tenant %q: %s %q must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", t.String(), p.what, p.v)
		}
	}
	return nil
}

func (t TenantID) String() string { return t.Environment + "/" + t.Function }

// TenantInfo is a tenant's info value.
type TenantInfo struct {
	Environment string   `json:"environment"`
	Function    string   `json:"function"`
	Nodes       []string `json:"nodes"`
}

// ID returns the tenant's ID.
func (i TenantInfo) ID() TenantID { return TenantID{i.Environment, i.Function} }

// keys builds the KV keys under a prefix. Tenant infos sit apart from the
// bulky series so that listing every tenant reads only the infos.
type keys struct{ prefix string }

func (k keys) tenants() string                   { return k.prefix + "tenants/" }
func (k keys) info(t TenantID) string            { return k.tenants() + t.String() }
func (k keys) cpuDir(t TenantID) string          { return k.prefix + "cpu/" + t.String() + "/" }
func (k keys) day(t TenantID, d Date) string     { return k.cpuDir(t) + d.String() }
func (k keys) reimDir(t TenantID) string         { return k.prefix + "reimages/" + t.String() + "/" }
func (k keys) month(t TenantID, m string) string { return k.reimDir(t) + m }
