package driver

import (
	"context"
	"sync"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
)

// maxPending bounds the samples kept while Consul is unreachable: two days
// of 2-minute slots. Older ones are dropped first.
const maxPending = 2 * history.SlotsPerDay

// BusyFlag is what the driver publishes for the blob tier at
// <consul_prefix>busy/<node_name>: the node is busy when its primary tenant
// uses busy_threshold percent of capacity or more (default: the reserve's
// edge, 100% - reserve), and storage reads should go to another replica.
type BusyFlag struct {
	Busy       bool      `json:"busy"`
	PrimaryCPU float64   `json:"primary_cpu_percent"`
	Threshold  float64   `json:"threshold_percent"`
	Updated    time.Time `json:"updated"`
}

// reporter aggregates the primary tenant's CPU into 2-minute slots, sends
// them to the tenant history in batches, and publishes the busy flag. It
// never blocks the guard loop: Consul being away only delays the reports.
type reporter struct {
	log       hclog.Logger
	store     *history.Store
	tenant    history.TenantID
	node      string
	capacity  guard.Resources
	threshold float64
	wake      chan struct{}

	slot        time.Time
	sum         float64
	n           int
	pending     []history.Sample
	busy        BusyFlag
	busyChanged bool
	lastBusyPut time.Time
	mu          sync.Mutex // guards the fields above, shared by observe and run
}

// newReporter returns nil (reporting off) unless tenant and Consul are set.
func newReporter(ctx context.Context, cfg Config, capacity guard.Resources, log hclog.Logger) *reporter {
	if cfg.Tenant == "" || cfg.ConsulAddress == "" || cfg.NodeName == "" {
		log.Info("node samples and busy flag off: set tenant, node_name and consul_address to enable")
		return nil
	}
	id, err := history.ParseTenantID(cfg.Tenant)
	if err != nil {
		log.Error("node samples off", "error", err)
		return nil
	}
	client, err := consulapi.NewClient(&consulapi.Config{Address: cfg.ConsulAddress})
	if err != nil {
		log.Error("node samples off", "error", err)
		return nil
	}
	threshold := cfg.BusyThreshold
	if threshold <= 0 {
		reserve, _ := guard.ParseAmount(or(cfg.ReserveCPU, guard.DefaultReserveCPU), capacity.CPU)
		threshold = 100 * (capacity.CPU - reserve) / capacity.CPU
	}
	return startReporter(ctx, history.NewStore(history.NewConsulKV(client), cfg.ConsulPrefix), id, cfg.NodeName, capacity, threshold, log)
}

func startReporter(ctx context.Context, store *history.Store, tenant history.TenantID, node string, capacity guard.Resources, threshold float64, log hclog.Logger) *reporter {
	r := &reporter{log: log, store: store, tenant: tenant, node: node, capacity: capacity, threshold: threshold,
		wake: make(chan struct{}, 1)}
	go r.run(ctx)
	return r
}

// observe takes one guard-loop measurement.
func (r *reporter) observe(now time.Time, primary guard.Resources) {
	if r == nil {
		return
	}
	pct := min(100, max(0, 100*primary.CPU/r.capacity.CPU))
	slot := now.UTC().Truncate(history.Slot)
	r.mu.Lock()
	if !r.slot.IsZero() && !slot.Equal(r.slot) && r.n > 0 {
		r.pending = append(r.pending, history.Sample{Node: r.node, Time: r.slot, CPU: r.sum / float64(r.n)})
		if len(r.pending) > maxPending {
			r.pending = r.pending[len(r.pending)-maxPending:]
		}
		r.sum, r.n = 0, 0
		r.poke()
	}
	r.slot = slot
	r.sum += pct
	r.n++
	busy := pct >= r.threshold
	if busy != r.busy.Busy || now.Sub(r.lastBusyPut) > 30*time.Second {
		r.busy = BusyFlag{Busy: busy, PrimaryCPU: pct, Threshold: r.threshold, Updated: now.UTC()}
		r.busyChanged = true
		r.lastBusyPut = now
		r.poke()
	}
	r.mu.Unlock()
}

func (r *reporter) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run sends what observe gathered, retrying every 10 s while Consul is away.
func (r *reporter) run(ctx context.Context) {
	retry := time.NewTicker(10 * time.Second)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-retry.C:
		}
		r.mu.Lock()
		batch := append([]history.Sample(nil), r.pending...)
		flag, flagDue := r.busy, r.busyChanged
		r.busyChanged = false
		r.mu.Unlock()
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if flagDue {
			if err := r.store.PutDocument(wctx, "busy/"+r.node, flag); err != nil {
				r.log.Debug("busy flag not published; will retry", "error", err)
				r.mu.Lock()
				r.busyChanged = true
				r.mu.Unlock()
			}
		}
		if len(batch) > 0 {
			if err := r.store.AppendSamples(wctx, r.tenant, batch); err != nil {
				r.log.Warn("node samples not sent; buffering", "pending", len(batch), "error", err)
			} else {
				r.mu.Lock()
				r.pending = r.pending[min(len(batch), len(r.pending)):]
				r.mu.Unlock()
			}
		}
		cancel()
	}
}
