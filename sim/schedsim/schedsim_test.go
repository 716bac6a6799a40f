package schedsim

import (
	"math"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
)

// flat is a series at u percent with u2 from slot `from` on.
func flat(slots int, u, u2 float64, from int) history.Series {
	v := make([]float64, slots)
	for i := range v {
		v[i] = u
		if i >= from {
			v[i] = u2
		}
	}
	return history.Series{Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Values: v}
}

// spikeScenario: two one-server tenants of 4 cores with a 1-core reserve.
// Server A is idle, then its primary takes every core at 240 s; server B's
// primary holds every core until 120 s, then idles. One job of one 600 s
// task arrives at 10 s: only A has room.
func spikeScenario(p Policy) Config {
	return Config{Policy: p, Span: time.Hour, Cores: 4, Reserve: 1, Arrivals: []float64{10},
		Mix: Mix{Classes: []JobClass{{Name: "one", Weight: 1, Stages: [2]int{1, 1}, Tasks: [2]int{1, 1}, TaskSeconds: 600}}},
		Tenants: []Tenant{
			{ID: "a/primary", Servers: 1, Series: flat(30, 0, 100, 2)},
			{ID: "b/primary", Servers: 1, Series: flat(30, 100, 0, 1)},
		}}
}

// TestATaskOnASpikingServerIsEvictedAndRerun: under PT the spike at 240 s
// evicts the task (230 s wasted), it re-runs on B from 240 s and the job
// takes 830 s. Under stock (A alone) the task is never evicted (600 s) but
// sits in A's reserve for the slots at 240, 360, 480 and 600 s.
func TestATaskOnASpikingServerIsEvictedAndRerun(t *testing.T) {
	pt, err := Run(spikeScenario(PT))
	if err != nil {
		t.Fatal(err)
	}
	if pt.Jobs != 1 || pt.Evicted != 1 || math.Abs(pt.WastedTaskSeconds-230) > 1e-6 || math.Abs(pt.MeanJobSeconds-830) > 1e-6 {
		t.Fatalf("pt: %+v", pt)
	}
	only := spikeScenario(Stock)
	only.Tenants = only.Tenants[:1] // stock ignores the primaries: with B there it may pick either
	stock, err := Run(only)
	if err != nil {
		t.Fatal(err)
	}
	if stock.Jobs != 1 || stock.Evicted != 0 || stock.MeanJobSeconds != 600 || stock.OverrunSlots != 4 {
		t.Fatalf("stock: %+v", stock)
	}
}

func TestScaling(t *testing.T) {
	for _, c := range []struct {
		s       Scaling
		f, u, w float64
	}{{Linear, 2, 30, 60}, {Linear, 2, 70, 100}, {Root, 2, 25, 50}, {Root, 1, 40, 40}} {
		if got := Scale(c.s, c.f, c.u); math.Abs(got-c.w) > 1e-9 {
			t.Errorf("%s x%.0f of %.0f = %.2f, want %.0f", c.s, c.f, c.u, got, c.w)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	c := spikeScenario("yarn")
	if _, err := Run(c); err == nil {
		t.Fatal("an unknown policy ran")
	}
	c = spikeScenario(PT)
	c.Span = 2 * time.Hour
	if _, err := Run(c); err == nil {
		t.Fatal("a span longer than the series ran")
	}
}
