package nodes

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

func TestRegistryRoundTripAndValidation(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry(kv.NewMem(), "harvest")
	n := Node{ID: "client-1", Tenant: "search/frontend", Environment: "search", Rack: "rack-1", Endpoint: "127.0.0.1:9000", Capacity: 1 << 30}
	if err := r.Register(ctx, n); err != nil {
		t.Fatal(err)
	}
	n.Capacity = 2 << 30
	if err := r.Register(ctx, n); err != nil {
		t.Fatal(err)
	}
	got, err := r.List(ctx)
	if err != nil || len(got) != 1 || got[0].Capacity != 2<<30 {
		t.Fatalf("list %+v %v", got, err)
	}
	for _, bad := range []Node{{ID: "a/b", Tenant: "x/y", Endpoint: "e", Capacity: 1}, {ID: "a", Tenant: "xy", Endpoint: "e", Capacity: 1},
		{ID: "a", Tenant: "x/y", Capacity: 1}, {ID: "a", Tenant: "x/y", Endpoint: "e"}} {
		if err := r.Register(ctx, bad); err == nil {
			t.Errorf("registered %+v", bad)
		}
	}
}

func TestGridTenantsAndReimageRate(t *testing.T) {
	nodes := []Node{
		{ID: "n1", Tenant: "a/x", Environment: "a", Rack: "r1", Capacity: 100},
		{ID: "n2", Tenant: "a/x", Environment: "a", Rack: "r2", Capacity: 100},
		{ID: "n3", Tenant: "b/y", Environment: "b", Rack: "r3", Capacity: 100},
	}
	ts := GridTenants(nodes, map[string]TenantStats{"a/x": {ReimageRate: 0.5, PeakCPU: 40}}, map[string]int64{"n1": 30}, map[string]bool{"n2": true})
	if len(ts) != 2 || len(ts[0].Nodes) != 2 || ts[0].Nodes[0].Free != 70 || !ts[0].Nodes[1].Busy {
		t.Fatalf("tenants %+v", ts[0])
	}
	if ts[1].PeakCPU != 100 || ts[1].ReimageRate < 1e6 {
		t.Fatalf("a tenant without history must count as the worst case: %+v", ts[1])
	}
	rate := ReimageRate(make([]history.Reimage, 6), 2, 90*24*time.Hour) // 6 reimages, 2 servers, 3 months
	if math.Abs(rate-1) > 1e-9 {
		t.Fatalf("rate %.3f, want 1 per server per month", rate)
	}
}

func TestPeakCPUIsThe95thPercentileOfTheSamples(t *testing.T) {
	var v []float64
	for i := 100; i >= 1; i-- { // 1..100, unsorted, with gaps
		v = append(v, float64(i), math.NaN())
	}
	if got := PeakCPU(v); got != 96 {
		t.Fatalf("peak %v, want 96 (rank 95 of 100 samples, gaps ignored)", got)
	}
	if got := PeakCPU([]float64{math.NaN()}); got != 0 {
		t.Fatalf("peak without samples %v, want 0", got)
	}
}

// Four reimages of 2 servers spread over 200 days: 1 per server per 100
// days (0.3 a month), not 4 over the 35 days the blob tier once assumed;
// an event older than a year and one in the future do not count; a lone
// recent event is spread over at least 35 days.
func TestRecentReimageRate(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := func(d int) history.Reimage { return history.Reimage{Node: "n", Time: now.AddDate(0, 0, -d)} }
	events := []history.Reimage{day(200), day(150), day(100), day(1), day(400), day(-3)}
	if got, want := RecentReimageRate(events, 2, now), 4.0/2/(200.0/30); math.Abs(got-want) > 1e-9 {
		t.Errorf("rate %.4f, want %.4f", got, want)
	}
	if got, want := RecentReimageRate([]history.Reimage{day(2)}, 1, now), 1/(35.0/30); math.Abs(got-want) > 1e-9 {
		t.Errorf("lone event: rate %.4f, want %.4f", got, want)
	}
}

// TestBusyHoursIsTheShareOfEachHourAtOrAboveTheThreshold: a series that
// starts at 23:00 and is busy (80%) from 02:00 to 04:00 on one of two
// days, with a gap at 05:00, is half busy at 02 and 03 and never at
// the other hours; an hour without samples counts as busy.
func TestBusyHoursIsTheShareOfEachHourAtOrAboveTheThreshold(t *testing.T) {
	start := time.Date(2026, 11, 1, 23, 0, 0, 0, time.UTC)
	per := int(time.Hour / history.Slot)
	values := make([]float64, 48*per)
	for i := range values {
		at := start.Add(time.Duration(i) * history.Slot)
		switch {
		case at.Day() == 2 && (at.Hour() == 2 || at.Hour() == 3):
			values[i] = 80
		case at.Hour() == 5:
			values[i] = math.NaN()
		default:
			values[i] = 20
		}
	}
	got := BusyHours(values, start, 67)
	for h, share := range got {
		want := 0.0
		switch h {
		case 2, 3:
			want = 0.5
		case 5:
			want = 1
		}
		if share != want {
			t.Errorf("hour %02d: busy share %v, want %v", h, share, want)
		}
	}
}
