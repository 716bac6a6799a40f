package driver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
)

// flakyKV fails every call while down, like an unreachable Consul.
type flakyKV struct {
	*history.MemKV
	down atomic.Bool // set by the test while the reporter's goroutine writes
}

func (f *flakyKV) CAS(ctx context.Context, k string, v []byte, i uint64) (bool, error) {
	if f.down.Load() {
		return false, context.DeadlineExceeded
	}
	return f.MemKV.CAS(ctx, k, v, i)
}

func TestReporterAveragesSlotsBuffersAndPublishesBusy(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv := &flakyKV{MemKV: history.NewMemKV()}
	kv.down.Store(true)
	store := history.NewStore(kv, "")
	tenant := history.TenantID{Environment: "search", Function: "frontend"}
	r := startReporter(ctx, store, tenant, "client-1", guard.Resources{CPU: 2, MemoryMiB: 4096}, 75, hclog.NewNullLogger())

	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	// slot 1: 0.5 and 1.5 cores of 2: mean 50%; then the first sample of slot 2, busy (80% >= 75%)
	r.observe(t0, guard.Resources{CPU: 0.5})
	r.observe(t0.Add(time.Minute), guard.Resources{CPU: 1.5})
	r.observe(t0.Add(2*time.Minute), guard.Resources{CPU: 1.6, MemoryMiB: 900})
	time.Sleep(100 * time.Millisecond)
	r.mu.Lock()
	pending := len(r.pending)
	r.mu.Unlock()
	if pending != 1 {
		t.Fatalf("%d samples pending while Consul is down, want 1 buffered", pending)
	}

	kv.down.Store(false) // Consul is back: the buffer drains on the next wake-up
	r.poke()
	var flag BusyFlag
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
