// Package nodereport sends a node's primary-tenant CPU to the tenant
// history in Consul KV, averaged into 2-minute slots and sent in batches,
// and publishes the node's busy flag. The harvest driver feeds it one
// measurement per guard-loop tick; it never blocks that loop: Consul being
// away only delays the reports, which are buffered meanwhile.
package nodereport

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
)

// maxPending bounds the samples kept while Consul is unreachable: two days
// of 2-minute slots. Older ones are dropped first.
const maxPending = 2 * history.SlotsPerDay

// flushEvery is how often a driver sends its slots to the tenant history:
// five slots to one check-and-set of the tenant's day, so that 10,000
// drivers make ~17 writes a second instead of ~170 (one per slot, and one
// more for the tenant's info, before), each driver at its own offset in
// the interval (jitter) rather than all at a slot's edge, where nodes of
// one tenant would conflict on its day. The placer reads the history once
// a day; the latest hour it uses for current utilisation lags by up to
// this much.
const flushEvery = 10 * time.Minute

// retryMin is the first wait after a failed send; it doubles up to
// flushEvery while Consul stays away.
const retryMin = 10 * time.Second

// Reporter aggregates the primary tenant's CPU into 2-minute slots, sends
// them to the tenant history in batches, and publishes the busy flag. It
// never blocks the guard loop: Consul being away only delays the reports.
type Reporter struct {
	log      hclog.Logger
	store    *history.Store
	tenant   history.TenantID
	node     string
	capacity guard.Resources
	wake     chan struct{}

	threshold     float64 // percent of capacity
	followReserve bool    // the threshold is the reserve's edge (no busy_threshold set)
	slot          time.Time
	sum           float64
	n             int
	pending       []history.Sample
	busy          contract.BusyFlag
	busyChanged   bool
	lastBusyPut   time.Time
	flushEvery    time.Duration    // 0: send at every wake-up
	nextFlush     time.Time        // when pending samples are next sent
	retry         time.Duration    // current backoff after a failed send
	now           func() time.Time // the clock of flushes (tests set it)
	mu            sync.Mutex       // guards the fields above, shared by observe and run
}

// ReserveEdge is the busy threshold a CPU reserve gives: 100% - reserve.
func ReserveEdge(capacity, reserve float64) float64 { return max(0, 100*(capacity-reserve)/capacity) }

// ReserveChanged moves the default busy threshold with the effective CPU
// reserve (cores); a configured busy_threshold stays.
func (r *Reporter) ReserveChanged(cpu float64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.followReserve {
		r.threshold = ReserveEdge(r.capacity.CPU, cpu)
	}
}

// Options say whose samples a Reporter sends, and where.
type Options struct {
	Store    *history.Store
	Tenant   history.TenantID
	Node     string          // the node's name: its samples' and busy flag's
	Capacity guard.Resources // the node's, which the CPU percentages are of
	// Threshold is the busy flag's, in percent of capacity. With
	// FollowReserve it moves with the reserve (ReserveChanged).
	Threshold     float64
	FollowReserve bool
	Log           hclog.Logger
}

// Start starts a Reporter, which runs until ctx ends.
func Start(ctx context.Context, o Options) *Reporter {
	r := &Reporter{log: o.Log, store: o.Store, tenant: o.Tenant, node: o.Node, capacity: o.Capacity, threshold: o.Threshold,
		followReserve: o.FollowReserve, wake: make(chan struct{}, 1), flushEvery: flushEvery, now: time.Now}
	// the first send within a slot of starting (a new node shows in the
	// history soon), then at the node's own offset in every interval
	r.nextFlush = r.now().Add(history.FlushOffset(o.Node, history.Slot))
	go r.run(ctx)
	return r
}

// Threshold is the busy flag's threshold now (percent of capacity).
func (r *Reporter) Threshold() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threshold
}

// Observe takes one guard-loop measurement.
func (r *Reporter) Observe(now time.Time, primary guard.Resources) {
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
		r.busy = contract.BusyFlag{Busy: busy, PrimaryCPU: pct, PrimaryMemory: max(0, primary.MemoryMiB), Threshold: r.threshold, Updated: now.UTC()}
		r.busyChanged = true
		r.lastBusyPut = now
		r.poke()
	}
	r.mu.Unlock()
}

func (r *Reporter) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// nextPhase is the first time after now at offset within an interval of
// length every (counted from Go's zero time): where a node's sends fall,
// the same on every node's clock and across restarts.
func nextPhase(now time.Time, every, offset time.Duration) time.Time {
	base := now.Truncate(every).Add(offset)
	for !base.After(now) {
		base = base.Add(every)
	}
	return base
}

// run sends what Observe gathered when its flush is due, and the busy flag
// at once; a failed send is retried with a doubling backoff.
func (r *Reporter) run(ctx context.Context) {
	tick := time.NewTicker(retryMin)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-tick.C:
		}
		r.mu.Lock()
		var batch []history.Sample
		if now := r.now(); r.flushEvery == 0 || !now.Before(r.nextFlush) {
			batch = append(batch, r.pending...)
		}
		flag, flagDue := r.busy, r.busyChanged
		r.busyChanged = false
		r.mu.Unlock()
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if flagDue {
			if err := r.store.PutDocument(wctx, contract.BusyDocument(r.node), flag); err != nil {
				r.log.Debug("busy flag not published; will retry", "error", err)
				r.mu.Lock()
				r.busyChanged = true
				r.mu.Unlock()
			}
		}
		if len(batch) > 0 {
			err := r.store.AppendSamples(wctx, r.tenant, batch)
			r.mu.Lock()
			if err != nil {
				r.retry = min(max(retryMin, 2*r.retry), max(retryMin, r.flushEvery))
				r.nextFlush = r.now().Add(r.retry)
				r.log.Warn("node samples not sent; buffering", "pending", len(batch), "retry_in", r.retry, "error", err)
			} else {
				r.pending = r.pending[min(len(batch), len(r.pending)):]
				r.retry = 0
				if r.flushEvery > 0 {
					r.nextFlush = nextPhase(r.now(), r.flushEvery, history.FlushOffset(r.node, r.flushEvery))
				}
			}
			r.mu.Unlock()
		}
		cancel()
	}
}
