package schedsim

import (
	"math"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/jobtype"
)

// dailyAndSteady: two one-server tenants of 16 cores (2 reserved) with 8
// days of history. "daily" swings from 10% at midnight to 90% at noon;
// "steady" holds 25% (4 cores). A long job (one stage of eight 8-hour
// tasks) arrives just after midnight, when daily has the most room.
func dailyAndSteady(p Policy) Config {
	const days = 9
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	daily := make([]float64, days*history.SlotsPerDay)
	steady := make([]float64, len(daily))
	for k := range daily {
		daily[k] = 50 - 40*math.Cos(2*math.Pi*float64(k)/float64(history.SlotsPerDay))
		steady[k] = 25
	}
	return Config{Policy: p, HistoryDays: 8, Cores: 16, Reserve: 2, Span: 24 * time.Hour, Arrivals: []float64{10},
		Thresholds: jobtype.Default(),
		Mix:        Mix{Classes: []JobClass{{Name: "long", Weight: 1, Stages: [2]int{1, 1}, Tasks: [2]int{8, 8}, TaskSeconds: 8 * 3600}}},
		Tenants: []Tenant{
			{ID: "daily/svc", Servers: 1, Series: history.Series{Start: start, Values: daily}},
			{ID: "steady/svc", Servers: 1, Series: history.Series{Start: start, Values: steady}},
		}}
}

// TestHistoryKeepsALongJobOffAPeriodicServer: PT puts tasks where the room
// is now (daily's trough, in proportion to the room) and the afternoon rise
// evicts them; H classifies daily as periodic with a 90% peak, Algorithm 1
// sends the long job to the constant class (daily has no room at its peak:
// 16 - 15 - 2 < 0), and all eight tasks run on steady (16 - 4 - 2 = 10
// cores free) without an eviction, finishing in 8 hours.
func TestHistoryKeepsALongJobOffAPeriodicServer(t *testing.T) {
	pt, err := Run(dailyAndSteady(PT))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Run(dailyAndSteady(History))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pt: %.0f s, %d evicted, %.0f task-seconds wasted; h: %.0f s", pt.MeanJobSeconds, pt.Evicted, pt.WastedTaskSeconds, h.MeanJobSeconds)
	if pt.Jobs != 1 || pt.Evicted == 0 {
		t.Fatalf("pt: want the job done after evictions, got %+v", pt)
	}
	if h.Jobs != 1 || h.Evicted != 0 || h.Fits["one"] != 1 || math.Abs(h.MeanJobSeconds-8*3600) > 1e-6 {
		t.Fatalf("h: want one class, no eviction, an 8-hour job; got %+v", h)
	}
	if h.MeanJobSeconds >= pt.MeanJobSeconds {
		t.Fatalf("h %.0f s is not shorter than pt %.0f s", h.MeanJobSeconds, pt.MeanJobSeconds)
	}
	if h.EvictedByPattern["periodic"] != 0 || pt.EvictedByPattern["periodic"] != pt.Evicted {
		t.Fatalf("evictions by pattern: pt %v, h %v", pt.EvictedByPattern, h.EvictedByPattern)
	}
}
