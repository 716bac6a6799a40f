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

// reuseScenario: one 4-core server with a 2-core reserve whose primary
// uses one core, so one container fits. A job of one stage of three 100 s
// tasks arrives at 10 s and runs them in turn in that container (10-110,
// 110-210, 210-...). At 240 s the primary takes the whole server for one
// slot, and the guard kills the container 30 s into its third task.
func reuseScenario(lost LostWork) Config {
	u := make([]float64, 30)
	for i := range u {
		u[i] = 25
	}
	u[2] = 100
	return Config{Policy: PT, Span: time.Hour, Cores: 4, Reserve: 2, Arrivals: []float64{10}, ContainerReuse: true, LostWork: lost,
		Mix:     Mix{Classes: []JobClass{{Name: "one", Weight: 1, Stages: [2]int{1, 1}, Tasks: [2]int{3, 3}, TaskSeconds: 100}}},
		Tenants: []Tenant{{ID: "a/primary", Servers: 1, Series: history.Series{Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Values: u}}}}
}

// TestAReusedContainerIsKilledWithTheWorkOfEveryTaskItRan: with
// LostContainer the kill loses the two finished tasks' 200 s and the third
// one's 30 s; all three run again from 360 s, when the primary falls back,
// and the job ends at 660 s. With LostTask only the 30 s are lost and the
// job ends at 460 s. With LostNothing (the bound) nothing is lost: the third
// task's last 70 s run from 360 s and the job ends at 430 s.
func TestAReusedContainerIsKilledWithTheWorkOfEveryTaskItRan(t *testing.T) {
	for _, c := range []struct {
		lost         LostWork
		wasted, took float64
	}{{LostContainer, 230, 650}, {LostTask, 30, 450}, {LostNothing, 0, 420}} {
		r, err := Run(reuseScenario(c.lost))
		if err != nil {
			t.Fatal(err)
		}
		if r.Jobs != 1 || r.Evicted != 1 || math.Abs(r.WastedTaskSeconds-c.wasted) > 1e-6 || math.Abs(r.MeanJobSeconds-c.took) > 1e-6 {
			t.Errorf("%s: evicted %d, wasted %.0f s (want %.0f), job %.0f s (want %.0f)", c.lost, r.Evicted, r.WastedTaskSeconds, c.wasted, r.MeanJobSeconds, c.took)
		}
	}
}

// TestAJobThatFitsNoClassRunsUnlabelledAtOnce: a job wider than every
// class's room gets no class from Algorithm 1 (line 16) and starts at once
// under the default placement instead of waiting for a class to fit.
func TestAJobThatFitsNoClassRunsUnlabelledAtOnce(t *testing.T) {
	cfg := dailyAndSteady(History)
	cfg.Mix = Mix{Classes: []JobClass{{Name: "wide", Weight: 1, Stages: [2]int{1, 1}, Tasks: [2]int{12, 12}, TaskSeconds: 600}}}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Fits["none"] != 1 || r.Jobs != 1 || r.MeanJobSeconds > 600+1e-6 {
		t.Fatalf("want no class, one job done in its 600 s; got fits %v, %d jobs, %.0f s", r.Fits, r.Jobs, r.MeanJobSeconds)
	}
	if f := r.ByJobClass["wide"].Fits; len(f) != 1 || f["long/none"]+f["medium/none"]+f["short/none"] != 1 {
		t.Fatalf("want the wide job counted under its class as typed and unfit, got %v", f)
	}
	cfg.HoldUnfit = true // the former behaviour: held until a class fits, which never happens here
	r, err = Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs != 0 || r.Unfinished != 1 {
		t.Fatalf("HoldUnfit: want the job still held, got %d done, %d unfinished", r.Jobs, r.Unfinished)
	}
}
