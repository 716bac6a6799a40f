package nodereport

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

// flakyKV fails every call while down, like an unreachable Consul.
type flakyKV struct {
	*kv.Mem
	down atomic.Bool // set by the test while the reporter's goroutine writes
}

func (f *flakyKV) CAS(ctx context.Context, k string, v []byte, i uint64) (bool, error) {
	if f.down.Load() {
		return false, context.DeadlineExceeded
	}
	return f.Mem.CAS(ctx, k, v, i)
}

func TestReporterAveragesSlotsBuffersAndPublishesBusy(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv := &flakyKV{Mem: kv.NewMem()}
	kv.down.Store(true)
	store := history.NewStore(kv, "")
	tenant := history.TenantID{Environment: "search", Function: "frontend"}
	r := Start(ctx, Options{Store: store, Tenant: tenant, Node: "client-1", Capacity: guard.Resources{CPU: 2, MemoryMiB: 4096}, Threshold: 75, Log: hclog.NewNullLogger()})
	r.mu.Lock()
	r.flushEvery = 0 // send at every wake-up (TestReporterFlushes covers the interval)
	r.mu.Unlock()

	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	// slot 1: 0.5 and 1.5 cores of 2: mean 50%; then the first sample of slot 2, busy (80% >= 75%)
	r.Observe(t0, guard.Resources{CPU: 0.5})
	r.Observe(t0.Add(time.Minute), guard.Resources{CPU: 1.5})
	r.Observe(t0.Add(2*time.Minute), guard.Resources{CPU: 1.6, MemoryMiB: 900})
	time.Sleep(100 * time.Millisecond)
	r.mu.Lock()
	pending := len(r.pending)
	r.mu.Unlock()
	if pending != 1 {
		t.Fatalf("%d samples pending while Consul is down, want 1 buffered", pending)
	}

	kv.down.Store(false) // Consul is back: the buffer drains on the next wake-up
	r.poke()
	var flag contract.BusyFlag
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r.poke()
		s, err := store.Series(ctx, tenant, t0, t0.Add(time.Hour))
		ok, _ := store.GetDocument(ctx, "busy/client-1", &flag)
		if err == nil && s.Observed() == 1 && ok {
			if v := s.Values[history.SlotOf(t0)]; v != 50 {
				t.Fatalf("slot mean %.2f%%, want 50%%", v)
			}
			if !flag.Busy || flag.Threshold != 75 || flag.PrimaryCPU != 80 || flag.PrimaryMemory != 900 {
				t.Fatalf("busy flag %+v", flag)
			}
			return
		}
	}
	t.Fatal("buffered samples or busy flag never reached the store")
}

// TestReporterFlushes: slots wait for the node's flush time and then go in
// one write of the tenant's day (after the first flush, which also records
// the node in the tenant's info): one write per node per flush interval.
func TestReporterFlushes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv := &historyWrites{Mem: kv.NewMem()}
	store := history.NewStore(kv, "")
	if _, err := store.InitFormat(ctx); err != nil {
		t.Fatal(err)
	}
	tenant := history.TenantID{Environment: "search", Function: "frontend"}
	r := Start(ctx, Options{Store: store, Tenant: tenant, Node: "client-7", Capacity: guard.Resources{CPU: 2, MemoryMiB: 4096}, Threshold: 101, Log: hclog.NewNullLogger()})
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := t0
	r.mu.Lock()
	r.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	r.nextFlush = t0.Add(history.FlushOffset("client-7", flushEvery))
	due := r.nextFlush
	r.mu.Unlock()
	cycle := func(from time.Time) {
		for i := 0; i <= 5; i++ { // five whole slots, and the first sample of the sixth
			r.Observe(from.Add(time.Duration(i)*history.Slot), guard.Resources{CPU: 1})
		}
	}
	waitObserved := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			r.poke()
			if s, err := store.Series(ctx, tenant, t0, t0.Add(time.Hour)); err == nil && s.Observed() == n {
				return
			}
		}
		t.Fatalf("never saw %d slots in the store", n)
	}
	cycle(t0)
	r.poke()
	r.mu.Lock()
	pending := len(r.pending)
	r.mu.Unlock()
	if pending != 5 {
		t.Fatalf("%d slots pending before the flush, want 5", pending)
	}
	mu.Lock()
	clock = due
	mu.Unlock()
	waitObserved(5)
	if n := kv.count(); n != 2 { // the tenant's info, then its day
		t.Fatalf("first flush made %d history writes, want 2", n)
	}
	cycle(t0.Add(5 * history.Slot))
	mu.Lock()
	clock = due.Add(flushEvery)
	mu.Unlock()
	waitObserved(10)
	if n := kv.count(); n != 3 {
		t.Fatalf("second flush made %d history writes in all, want 3 (one for the day)", n)
	}
}

// historyWrites counts successful writes of tenant history (days and
// infos), not of the busy flag.
type historyWrites struct {
	*kv.Mem
	mu sync.Mutex
	n  int
}

func (h *historyWrites) CAS(ctx context.Context, k string, v []byte, i uint64) (bool, error) {
	ok, err := h.Mem.CAS(ctx, k, v, i)
	if ok && (strings.HasPrefix(k, "harvest/days/") || strings.HasPrefix(k, "harvest/tenants/")) {
		h.mu.Lock()
		h.n++
		h.mu.Unlock()
	}
	return ok, err
}

func (h *historyWrites) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func TestNextPhaseIsTheNodesOffsetInTheNextInterval(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ now, want time.Time }{
		{t0, t0.Add(3 * time.Minute)},
		{t0.Add(3 * time.Minute), t0.Add(13 * time.Minute)},
		{t0.Add(9 * time.Minute), t0.Add(13 * time.Minute)},
	} {
		if got := nextPhase(c.now, 10*time.Minute, 3*time.Minute); !got.Equal(c.want) {
			t.Fatalf("after %s: %s, want %s", c.now.Format(time.TimeOnly), got.Format(time.TimeOnly), c.want.Format(time.TimeOnly))
		}
	}
}
