package driver

// The reserve declared for this node's primary tenant. Operators declare a
// tenant's CPU and memory reserve, and a default for every tenant in the
// placer's policy document, through the placer's API; both live in Consul
// KV (history/declare has their shapes and checks). When tenant and
// consul_address are set, the driver reads its tenant's declaration and
// the policy document at start and every declarationsInterval, and keeps,
// per resource, the tenant's declared value, else the policy's, else the
// plugin config's reserve_cpu / reserve_memory. The guard loop, admission
// and the fingerprint all take the reserve from reserveLocked, under the
// driver's lock, so a swap is seen whole by each of them.
//
// A read that fails (Consul away) or finds a corrupt document changes
// nothing: the last good reserve stays enforced (the config's until a read
// succeeds), and the failure is logged once per different error. A
// document that is gone is a good read: its values no longer apply.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/internal/periodic"
)

// declarationsInterval is how often the declarations are read again.
const declarationsInterval = 10 * time.Second

// declarationsTimeout bounds one read of both documents.
const declarationsTimeout = 5 * time.Second

// Where a value of the effective reserve comes from, as the log and the
// fingerprint (driver.harvest.reserve_*_source) say it.
const (
	fromTenant = string(declare.FromTenant)
	fromPolicy = string(declare.FromPolicy)
	fromConfig = "config"
)

// effectiveReserve is the reserve the driver keeps, and where each of its
// values comes from.
type effectiveReserve struct {
	guard.Resources
	CPUFrom, MemoryFrom string
}

// declared are the documents of the last good read (nil: none stored).
type declared struct {
	tenant *declare.TenantValues
	policy *declare.Policy
}

// over is the effective reserve: per resource the tenant's declared value,
// else the policy's, else config (the plugin config's reserve). A declared
// value below floor (the driver's reserve_floor_*) is refused, as if it were
// not declared: whatever the placer's documents say, the primary tenant
// keeps at least the floor.
func (dc declared) over(config, floor guard.Resources) effectiveReserve {
	dc, _ = dc.aboveFloor(floor)
	r := effectiveReserve{Resources: config, CPUFrom: fromConfig, MemoryFrom: fromConfig}
	if cpu, src := declare.ReserveCPU(dc.tenant, dc.policy); cpu != nil {
		r.CPU, r.CPUFrom = *cpu, string(src)
	}
	if mem, src := declare.ReserveMemoryMB(dc.tenant, dc.policy); mem != nil {
		r.MemoryMiB, r.MemoryFrom = float64(*mem), string(src) // Nomad's MB are MiB
	}
	return r
}

// aboveFloor is dc without its values below floor, and what it left out
// ("tenant reserve_cpu 0 < floor 0.4", ...), for the log.
func (dc declared) aboveFloor(floor guard.Resources) (declared, []string) {
	var refused []string
	cpu := func(from string, v **float64) {
		if *v != nil && **v < floor.CPU {
			refused = append(refused, fmt.Sprintf("%s reserve_cpu %g < floor %g cores", from, **v, floor.CPU))
			*v = nil
		}
	}
	mem := func(from string, v **int64) {
		if *v != nil && float64(**v) < floor.MemoryMiB {
			refused = append(refused, fmt.Sprintf("%s reserve_memory_mb %d < floor %g MiB", from, **v, floor.MemoryMiB))
			*v = nil
		}
	}
	if dc.tenant != nil {
		t := *dc.tenant
		cpu(fromTenant, &t.ReserveCPU)
		mem(fromTenant, &t.ReserveMemoryMB)
		dc.tenant = &t
	}
	if dc.policy != nil {
		p := *dc.policy
		cpu(fromPolicy, &p.ReserveCPU)
		mem(fromPolicy, &p.ReserveMemoryMB)
		dc.policy = &p
	}
	return dc, refused
}

// declWatcher reads one tenant's declaration and the policy document, and
// remembers its failures so that each different one is logged once. Only
// the watching goroutine uses it.
type declWatcher struct {
	store  *history.Store
	tenant history.TenantID
	log    hclog.Logger
	fails  declare.FailureLog // the driver has no metrics sink: its count is logged
	// refused is the last logged set of declarations below the floor
	refused string
}

// newDeclWatcher returns nil (config reserve only) unless tenant and a
// Consul store are set.
func newDeclWatcher(cfg Config, store *history.Store, log hclog.Logger) *declWatcher {
	if cfg.Tenant == "" || store == nil {
		log.Info("declared reserve off: set tenant and consul_address to follow the placer's declarations")
		return nil
	}
	id, err := history.ParseTenantID(cfg.Tenant)
	if err != nil {
		log.Error("declared reserve off", "error", err)
		return nil
	}
	return &declWatcher{store: store, tenant: id, log: log}
}

// read reads both documents (declare.ReadTenant, declare.ReadPolicy); a
// value that does not decode or check is a *history.CorruptError naming its
// key, as the placer reports it.
func (w *declWatcher) read(ctx context.Context) (declared, error) {
	tenant, err := declare.ReadTenant(ctx, w.store, w.tenant)
	if err != nil {
		return declared{}, err
	}
	policy, err := declare.ReadPolicy(ctx, w.store)
	if err != nil {
		return declared{}, err
	}
	return declared{tenant: tenant, policy: policy}, nil
}

// watchDeclarations reads the declarations at start and every
// declarationsInterval until the driver shuts down.
func (d *Driver) watchDeclarations(w *declWatcher) {
	periodic.Every(d.ctx, declarationsInterval, func(context.Context) error { d.refreshDeclarations(w); return nil }, nil)
}

// refreshDeclarations reads the documents once: a good read swaps the
// effective reserve, a failed one keeps the last good reserve.
func (d *Driver) refreshDeclarations(w *declWatcher) {
	ctx, cancel := context.WithTimeout(d.ctx, declarationsTimeout)
	docs, err := w.read(ctx)
	cancel()
	logIt := w.fails.Note(err)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		if logIt {
			r := d.reserveLocked()
			w.log.Warn("cannot read the declared reserve; keeping the last good one", "error", err,
				"failed_reads", w.fails.Failures, "reserve_cores", r.CPU, "cores_from", r.CPUFrom,
				"reserve_mib", r.MemoryMiB, "memory_from", r.MemoryFrom)
		}
		return
	}
	if logIt {
		w.log.Info("declared reserve readable again", "failed_reads", w.fails.Failures)
	}
	if _, refused := docs.aboveFloor(d.settings.floor); strings.Join(refused, "; ") != w.refused {
		w.refused = strings.Join(refused, "; ")
		if w.refused != "" {
			w.log.Warn("declared reserve below this driver's reserve_floor refused: the next source applies", "refused", w.refused)
		}
	}
	d.declared = docs
	d.announceLocked()
}

// reserveLocked is the reserve to keep now; d.mu must be held.
func (d *Driver) reserveLocked() effectiveReserve {
	return d.declared.over(d.settings.reserve, d.settings.floor)
}

// announceLocked, after the declarations changed, logs a change of the
// effective reserve, re-fingerprints at once and moves the busy flag's
// default threshold with it; d.mu must be held.
func (d *Driver) announceLocked() {
	r := d.reserveLocked()
	if r == d.announced {
		return
	}
	d.announced = r
	d.logger.Info("effective reserve changed", "reserve_cores", r.CPU, "cores_from", r.CPUFrom,
		"reserve_mib", r.MemoryMiB, "memory_from", r.MemoryFrom)
	if !d.settings.capacity.Covers(r.Resources) {
		d.logger.Warn("the effective reserve is more than the node's capacity: no harvested task can run here",
			"capacity_cores", d.settings.capacity.CPU, "capacity_mib", d.settings.capacity.MemoryMiB)
	}
	d.wakeFingerprintLocked()
	d.reporter.ReserveChanged(r.CPU)
}

// wakeFingerprintLocked wakes the fingerprint loops (the effective reserve
// or the usage plugin's state changed); d.mu must be held.
func (d *Driver) wakeFingerprintLocked() {
	close(d.fingerprintWake)
	d.fingerprintWake = make(chan struct{})
}
