package declare

// Reading the stored documents, for everyone who follows them: the placer
// (its API and its sync), the harvest driver (its tenant's reserve) and the
// blob front (declared storage, default replication). A value that does
// not decode or check is a *history.CorruptError naming its key, so a
// document one reader calls corrupt the others do too; FailureLog is the
// "log each different failure once" the periodic readers share.

import (
	"context"
	"fmt"
	"strings"

	"github.com/harvest-platform/harvest/history"
)

// ReadPolicy reads the policy document: nil when none is stored.
func ReadPolicy(ctx context.Context, store *history.Store) (*Policy, error) {
	var p Policy
	ok, err := store.GetDocument(ctx, PolicyName, &p)
	if err != nil || !ok {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, &history.CorruptError{Key: store.DocumentKey(PolicyName), Err: err}
	}
	return &p, nil
}

// ReadTenant reads id's declaration: nil when none is stored.
func ReadTenant(ctx context.Context, store *history.Store, id history.TenantID) (*TenantValues, error) {
	var rec Tenant
	name := TenantDocument(id)
	ok, err := store.GetDocument(ctx, name, &rec)
	if err != nil || !ok {
		return nil, err
	}
	if err := rec.Check(id); err != nil {
		return nil, &history.CorruptError{Key: store.DocumentKey(name), Err: err}
	}
	return &rec.TenantValues, nil
}

// ReadTenants reads every declaration in one listing, by tenant ID
// ("environment/function"); broken are the documents that do not decode or
// check (by tenant ID, or by key when the key names no tenant), so that one
// bad value leaves the others usable. err is the listing's failure.
func ReadTenants(ctx context.Context, store *history.Store) (decls map[string]Tenant, broken map[string]error, err error) {
	docs, err := store.ListDocuments(ctx, TenantsDir)
	if err != nil {
		return nil, nil, err
	}
	decls, broken = map[string]Tenant{}, map[string]error{}
	for _, doc := range docs {
		id, err := history.ParseTenantID(strings.TrimPrefix(doc.Name, TenantsDir))
		if err != nil {
			broken[doc.Key] = &history.CorruptError{Key: doc.Key, Err: fmt.Errorf("key names no tenant: %w", err)}
			continue
		}
		var rec Tenant
		if err := doc.Decode(&rec); err != nil {
			broken[id.String()] = err
		} else if err := rec.Check(id); err != nil {
			broken[id.String()] = &history.CorruptError{Key: doc.Key, Err: err}
		} else {
			decls[id.String()] = rec
		}
	}
	return decls, broken, nil
}

// FailureLog counts the failed reads of a periodic reader and tells which
// are worth a log line, so that a reader keeping its last good values logs
// each different failure once and its recovery once. The zero value is
// ready; one goroutine uses it.
type FailureLog struct {
	last     string // the failure last logged; "" after a good read
	Failing  int    // failed reads since the last good one
	Failures uint64 // failed reads since start
}

// Note counts a read's outcome (err nil: a good read) and reports whether
// to log it: a failure different from the last one logged, or the first
// good read after failures.
func (f *FailureLog) Note(err error) bool {
	if err == nil {
		recovered := f.Failing > 0
		f.Failing, f.last = 0, ""
		return recovered
	}
	f.Failing++
	f.Failures++
	if msg := err.Error(); msg != f.last {
		f.last = msg
		return true
	}
	return false
}
