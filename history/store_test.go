package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/kv"
)

var (
	ctx    = context.Background()
	tenant = TenantID{"search", "frontend"}
	t0     = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
)

func TestConcurrentAppendsLoseNoSample(t *testing.T) {
	kv := kv.NewMem()
	s := NewStore(kv, "")
	const writers, perWriter = 8, 30
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				// every writer samples the same slot: each append conflicts
				x := Sample{Node: fmt.Sprintf("node-%d", w), Time: t0.Add(30 * time.Second), CPU: float64(10 * w)}
				if err := s.AppendSamples(ctx, tenant, []Sample{x}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	raw, _, _ := kv.Get(ctx, "harvest/cpu/search/frontend/2026-11-01")
	var day Day
	if err := day.UnmarshalBinary(raw); err != nil {
		t.Fatal(err)
	}
	if day.Count[0] != writers*perWriter {
		t.Fatalf("slot counted %d samples, want %d", day.Count[0], writers*perWriter)
	}
	if want := 35.0; math.Abs(day.Mean(0)-want) > 0.001 { // mean of 0,10,...,70, without drift
		t.Fatalf("slot mean %.3f, want %.1f (the average server)", day.Mean(0), want)
	}
	infos, err := s.Tenants(ctx)
	if err != nil || len(infos) != 1 || len(infos[0].Nodes) != writers {
		t.Fatalf("tenants = %+v, %v", infos, err)
	}
}

func TestSeriesRoundTripKeepsGaps(t *testing.T) {
	s := NewStore(kv.NewMem(), "custom")
	in := Series{Start: t0.Add(-Slot), Values: []float64{12.5, math.NaN(), 99.99, 0}}
	if err := s.PutSeries(ctx, tenant, in, []string{"n1"}); err != nil {
		t.Fatal(err)
	}
	out, err := s.Series(ctx, tenant, t0.Add(-time.Hour), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Start.Equal(DateOf(t0.Add(-Slot)).Time()) || len(out.Values) != 2*SlotsPerDay {
		t.Fatalf("series covers %s + %d slots", out.Start, len(out.Values))
	}
	got := out.Values[SlotsPerDay-1 : SlotsPerDay+3]
	want := []float64{12.5, math.NaN(), 99.99, 0}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 0.006) {
			t.Fatalf("slot %d = %v, want %v", i, got[i], want[i])
		}
	}
	if out.Observed() != 3 {
		t.Fatalf("observed %d slots, want 3", out.Observed())
	}
}

func TestCorruptValuesNameTheirKey(t *testing.T) {
	kv := kv.NewMem()
	s := NewStore(kv, "")
	if err := s.AppendSamples(ctx, tenant, []Sample{{Node: "n1", Time: t0, CPU: 5}}); err != nil {
		t.Fatal(err)
	}
	key := "harvest/cpu/search/frontend/2026-11-01"
	good, _, _ := kv.Get(ctx, key)
	flipped := append([]byte(nil), good...)
	flipped[100] ^= 0xff
	cases := map[string][]byte{
		"truncated": good[:len(good)/2],
		"flipped":   flipped,
		"empty":     {},
		"json":      []byte(`{"not":"a day"}`),
	}
	for name, v := range cases {
		kv.Put(key, v)
		_, err := s.Series(ctx, tenant, t0, t0.Add(time.Hour))
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Key != key || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err = %v, want a CorruptError naming %s", name, err, key)
		}
		// and an append refuses to overwrite it rather than lose the day
		if err := s.AppendSamples(ctx, tenant, []Sample{{Node: "n1", Time: t0, CPU: 5}}); !errors.As(err, &ce) {
			t.Errorf("%s: append over a corrupt day: %v", name, err)
		}
	}
	kv.Put("harvest/tenants/search/frontend", []byte("{trunc"))
	if _, err := s.Tenants(ctx); err == nil || !strings.Contains(err.Error(), "harvest/tenants/search/frontend") {
		t.Errorf("corrupt info: %v", err)
	}
}

func TestBadSamplesAreRefusedWholesale(t *testing.T) {
	kv := kv.NewMem()
	s := NewStore(kv, "")
	for _, bad := range []Sample{
		{Node: "n1", Time: t0, CPU: math.NaN()},
		{Node: "n1", Time: t0, CPU: -1},
		{Node: "n1", Time: t0, CPU: 100.5},
		{Node: "", Time: t0, CPU: 5},
		{Node: "n1", CPU: 5},
	} {
		err := s.AppendSamples(ctx, tenant, []Sample{{Node: "n1", Time: t0, CPU: 1}, bad})
		if err == nil {
			t.Errorf("sample %+v accepted", bad)
		}
	}
	if pairs, _ := kv.List(ctx, ""); len(pairs) != 0 {
		t.Fatalf("a refused batch wrote %d keys", len(pairs))
	}
	if err := s.AppendSamples(ctx, TenantID{"a/b", "c"}, nil); err == nil {
		t.Fatal("a tenant with a slash in its environment was accepted")
	}
}

func TestReimagesDeduplicateAndPruneKeepsRecentDays(t *testing.T) {
	s := NewStore(kv.NewMem(), "")
	ev := []Reimage{{Node: "n2", Time: t0.Add(48 * time.Hour)}, {Node: "n1", Time: t0}}
	for i := 0; i < 2; i++ { // a retried import
		if err := s.AddReimages(ctx, tenant, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Reimages(ctx, tenant)
	if err != nil || len(got) != 2 || got[0].Node != "n1" {
		t.Fatalf("reimages = %+v, %v", got, err)
	}
	for d := 0; d < 5; d++ {
		if err := s.AppendSamples(ctx, tenant, []Sample{{Node: "n1", Time: t0.Add(time.Duration(d) * 24 * time.Hour), CPU: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Prune(ctx, tenant, DateOf(t0)+3)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d days (%v), want 3", n, err)
	}
}
