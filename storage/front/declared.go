package front

// The declarations the front follows. Operators declare, through the
// placer's API or the Terraform provider, each primary tenant's harvestable
// storage (storage_mb of its declaration, per node) and, in the policy
// document, the blob tier's default replicas and diversity; both live in
// Consul KV (history/declare has their shapes, checks and readers). This
// file reads them at start and every DeclarationsInterval and applies:
//
//   - a node's capacity: its tenant's declared storage_mb, else the front's
//     capacity_mb. A new capacity rebuilds the grid at once, so it applies
//     to the next write; a capacity below what the node already holds
//     deletes nothing: the node is full (Algorithm 2 skips nodes without
//     room) until objects go or the capacity grows.
//   - the default policy of buckets without harvest-replicas /
//     harvest-diversity tags: the policy document's replicas and
//     diversity, else the front's replicas and strict. Bucket tags win over
//     both (policyOf). A default that changes kicks the repairer, which
//     brings objects of untagged buckets up to a higher count (surplus
//     replicas of a lower one are kept).
//
// Each document keeps its last good value: a read that fails (Consul away)
// keeps everything, a corrupt policy document keeps the last good defaults,
// a corrupt declaration keeps the last good capacity of that tenant's
// nodes (the config's until a read succeeds). Each different failure is
// logged once, and the recovery once; a document that is gone is a good
// read: its values no longer apply.

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/internal/periodic"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// DeclarationsInterval is how often FollowDeclarations reads the
// declarations again (as the harvest driver and the placer do).
const DeclarationsInterval = 10 * time.Second

// declarationsTimeout bounds one read of the documents.
const declarationsTimeout = 5 * time.Second

// Where an effective value comes from, as the log and /v1/status say it.
const (
	fromPolicy = string(declare.FromPolicy)
	fromConfig = nodes.FromConfig
)

// defaults are the policy of buckets without policy tags, and where its
// values come from.
type defaults struct {
	policy
	replicasFrom, diversityFrom string
}

// over is the default policy: the policy document's (p, nil when none)
// replicas and diversity over the front's configuration (c).
func (c policy) over(p *declare.Policy) defaults {
	d := defaults{policy: c, replicasFrom: fromConfig, diversityFrom: fromConfig}
	if p != nil && p.Replicas != nil {
		d.replicas, d.replicasFrom = *p.Replicas, fromPolicy
	}
	if p != nil && p.Diversity != nil {
		d.strict, d.diversityFrom = *p.Diversity == "strict", fromPolicy
	}
	return d
}

// diversity names the strict flag as the documents and bucket tags do.
func diversity(strict bool) string {
	if strict {
		return "strict"
	}
	return "degraded"
}

// storageBytes is a declared storage_mb (MiB) in bytes, saturating.
func storageBytes(mb int64) int64 {
	if mb > math.MaxInt64>>20 {
		return math.MaxInt64
	}
	return mb << 20
}

// declarations are the documents of the last good reads.
type declarations struct {
	store   *history.Store
	mu      sync.Mutex      // one refresh at a time
	policy  *declare.Policy // nil: none stored
	tenants map[string]declare.TenantValues
	fails   declare.FailureLog
}

// defaultPolicy is the policy of a bucket without policy tags, now.
func (b *Backend) defaultPolicy() defaults { return *b.defaults.Load() }

// FollowDeclarations reads the declarations every interval until ctx
// ends (the first read is the caller's, before it serves).
func (b *Backend) FollowDeclarations(ctx context.Context, interval time.Duration) {
	periodic.After(ctx, interval, func(ctx context.Context) error { b.RefreshDeclarations(ctx); return nil }, nil)
}

// RefreshDeclarations reads the policy document and the tenant
// declarations once and applies what changed; what cannot be read keeps
// its last good value.
func (b *Backend) RefreshDeclarations(ctx context.Context) {
	d := b.decl
	d.mu.Lock()
	defer d.mu.Unlock()
	readCtx, cancel := context.WithTimeout(ctx, declarationsTimeout)
	defer cancel()
	var errs []error
	if p, err := declare.ReadPolicy(readCtx, d.store); err != nil {
		errs = append(errs, err)
	} else {
		d.policy = p
	}
	decls, broken, err := declare.ReadTenants(readCtx, d.store)
	if err != nil {
		errs = append(errs, err)
	} else {
		next := map[string]declare.TenantValues{}
		for _, tenant := range b.tenants() { // other tenants' documents are not the front's concern
			if bad := broken[tenant]; bad != nil {
				errs = append(errs, bad)
				if last, ok := d.tenants[tenant]; ok {
					next[tenant] = last
				}
			} else if rec, ok := decls[tenant]; ok {
				next[tenant] = rec.TenantValues
			}
		}
		d.tenants = next
	}
	if ctx.Err() != nil {
		return // shutting down: not a failure worth a line
	}
	var failed error
	if len(errs) > 0 {
		failed = readErrors(errs)
	}
	if d.fails.Note(failed) {
		if failed != nil {
			b.log.Warn("cannot read the declarations; keeping the last good values", "error", failed,
				"failed_reads", d.fails.Failures)
		} else {
			b.log.Info("declarations readable again", "failed_reads", d.fails.Failures)
		}
	}
	if failed != nil {
		b.metrics.declarationFailures.Inc()
	}
	b.applyDeclarations(d.policy, d.tenants)
}

// readErrors are one refresh's failures, on one line.
type readErrors []error

func (e readErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e readErrors) Unwrap() []error { return e }

// tenants are the nodes' tenants.
func (b *Backend) tenants() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range b.nodes.List() {
		if !seen[n.Tenant] {
			seen[n.Tenant] = true
			out = append(out, n.Tenant)
		}
	}
	return out
}

// applyDeclarations makes the documents' values effective and says what
// changed.
func (b *Backend) applyDeclarations(p *declare.Policy, tenants map[string]declare.TenantValues) {
	kick := false
	def := b.config.over(p)
	if old := b.defaults.Swap(&def); *old != def {
		b.log.Info("default replication changed (buckets without harvest-replicas / harvest-diversity tags)",
			"replicas", def.replicas, "replicas_from", def.replicasFrom,
			"diversity", diversity(def.strict), "diversity_from", def.diversityFrom)
		if n := len(b.nodes.List()); def.replicas > n {
			b.log.Warn("the default replica count is more than the storage nodes: writes to untagged buckets will fail",
				"replicas", def.replicas, "nodes", n)
		}
		kick = true // a higher count leaves objects short: the repairer brings them up
	}
	storage := map[string]int64{}
	for tenant, v := range tenants {
		if v.StorageMB != nil {
			storage[tenant] = storageBytes(*v.StorageMB)
		}
	}
	if changes := b.nodes.SetDeclaredStorage(storage); len(changes) > 0 {
		b.objects.Regrid()
		for _, c := range changes {
			b.log.Info("storage node capacity changed", "node", c.Node, "capacity_bytes", c.To,
				"from", c.Source, "was_bytes", c.From, "used_bytes", c.Used)
			if c.Used > c.To {
				b.log.Warn("storage node holds more than its capacity: it takes no new replicas until objects go or the capacity grows; nothing is deleted",
					"node", c.Node, "capacity_bytes", c.To, "used_bytes", c.Used)
			}
		}
		kick = true // repairs that found no room may find it now
	}
	if kick {
		b.upkeep.KickRepair()
	}
}
