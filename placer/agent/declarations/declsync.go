package declarations

// Where the tenant declarations and the policy document take effect. One
// sync reads both documents from Consul KV, swaps Algorithm 1's weights
// (the proxy's rewriter and escalation read them) and brings the declared
// values' node meta of every harvested node in line, through the policy
// loops' cluster view: its node cache, applyMeta and applied-meta overlay.
// A sync runs right after each PUT or DELETE, after each class refresh and
// every Interval from start, so new nodes get their values; the
// weights alone are read before the proxy serves. The refresh reads the
// thresholds itself (Declared.Thresholds).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// Node meta the placer publishes from the declarations.
const (
	StorageMBKey       = "harvest_storage_mb"
	ReserveCPUKey      = "harvest_reserve_cpu"
	ReserveMemoryMBKey = "harvest_reserve_memory_mb"
)

// Interval is how often the declarations are published again without a
// change through the API (new nodes, a missed apply): the placer's
// "declarations" loop.
const Interval = 10 * time.Second

// Declared serves and applies the stored declarations.
type Declared struct {
	store   *history.Store
	view    cluster.View        // no Nomad client: nothing is published (API-only tests)
	weights *proxy.LiveWeights  // what the rewriter and escalation read
	base    selectclass.Weights // the configuration's weights, under the document's
	log     hclog.Logger

	mu sync.Mutex // one sync at a time: a pass that read older documents never lands after a newer one
}

// New serves and applies the documents in store: base are the
// configuration's weights (never modified), weights what the rewriter and
// escalation read, view where the declared values are published (the
// zero View: nowhere).
func New(store *history.Store, view cluster.View, weights *proxy.LiveWeights, base selectclass.Weights, log hclog.Logger) *Declared {
	return &Declared{store: store, view: view, weights: weights, base: base, log: log}
}

// Publish syncs now, after a PUT or DELETE (the document is stored either
// way) or a refresh; a failure is logged and retried by the next pass.
func (d *Declared) Publish(ctx context.Context) {
	if err := d.Sync(ctx); err != nil {
		d.log.Warn("declarations not all published; the next pass retries", "error", err)
	}
}

// Sync applies the stored documents. A corrupt policy document stops it
// (the weights and reserves stay as they were); a corrupt tenant
// declaration leaves that tenant's nodes alone and is reported.
func (d *Declared) Sync(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	policy, err := d.loadWeightsLocked(ctx)
	if err != nil {
		return err
	}
	if !d.view.HasNomad() {
		return nil
	}
	decls, broken, err := d.tenants(ctx)
	if err != nil {
		return err
	}
	nodes, err := d.view.HarvestedNodes(ctx)
	if err != nil {
		return fmt.Errorf("list nomad nodes: %w", err)
	}
	var errs []error
	for _, err := range broken {
		errs = append(errs, err)
	}
	for _, n := range nodes {
		tenant := n.Meta[labels.TenantKey]
		if broken[tenant] != nil || !n.Up { // a down client takes no meta: it gets it when back
			continue
		}
		var values *TenantValues
		if rec, ok := decls[tenant]; ok {
			values = &rec.TenantValues
		}
		set, unset := declaredMeta(n.Meta, values, policy)
		if len(set) == 0 && len(unset) == 0 {
			continue
		}
		if err := d.view.ApplyMeta(ctx, n.ID, set, unset...); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
			continue
		}
		d.log.Info("published declarations", "node", n.Name, "tenant", tenant, "set", set, "unset", unset)
	}
	return errors.Join(errs...)
}

// LoadWeights reads the policy document and swaps the weights to it.
func (d *Declared) LoadWeights(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err := d.loadWeightsLocked(ctx)
	return err
}

func (d *Declared) loadWeightsLocked(ctx context.Context) (*PolicyDocument, error) {
	policy, err := d.policy(ctx)
	if err == nil {
		d.weights.Store(weightsOver(policy, d.base))
	}
	return policy, err
}

// declaredMeta is the change that brings a node's meta to its tenant's
// declared values (t, nil when undeclared), each reserve falling back to
// the policy document's (p, nil when absent); a value declared by neither
// is removed.
func declaredMeta(meta map[string]string, t *TenantValues, p *PolicyDocument) (set map[string]string, unset []string) {
	if t == nil {
		t = &TenantValues{}
	}
	if p == nil {
		p = &PolicyDocument{}
	}
	want := map[string]string{}
	if t.StorageMB != nil {
		want[StorageMBKey] = strconv.FormatInt(*t.StorageMB, 10)
	}
	if cpu, _ := declare.ReserveCPU(t, p); cpu != nil {
		want[ReserveCPUKey] = strconv.FormatFloat(*cpu, 'f', -1, 64)
	}
	if mem, _ := declare.ReserveMemoryMB(t, p); mem != nil {
		want[ReserveMemoryMBKey] = strconv.FormatInt(*mem, 10)
	}
	set = map[string]string{}
	for _, k := range []string{StorageMBKey, ReserveCPUKey, ReserveMemoryMBKey} {
		have, present := meta[k]
		w, wanted := want[k]
		switch {
		case wanted && (!present || have != w):
			set[k] = w
		case !wanted && present:
			unset = append(unset, k)
		}
	}
	return set, unset
}
