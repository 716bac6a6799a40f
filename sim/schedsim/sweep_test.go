package schedsim

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestFenwickDrawsInProportionToWeight(t *testing.T) {
	f := newFenwick(5)
	for i, w := range []int64{0, 3, 0, 1, 6} {
		f.set(i, w)
	}
	if f.sum(1, 4) != 4 || f.prefix(5) != 10 {
		t.Fatalf("sums: [1,4) %d, all %d", f.sum(1, 4), f.prefix(5))
	}
	counts := make([]int, 5)
	rng := rand.New(rand.NewPCG(1, 1))
	for k := 0; k < 100000; k++ {
		counts[f.find(rng.Int64N(10))]++
	}
	for i, want := range []float64{0, 0.3, 0, 0.1, 0.6} {
		if got := float64(counts[i]) / 100000; math.Abs(got-want) > 0.01 {
			t.Errorf("index %d drawn %.3f of the time, want %.1f", i, got, want)
		}
	}
	f.set(4, 0)
	if got := f.find(3); got != 3 {
		t.Fatalf("after emptying 4, position 3 falls in %d, want 3", got)
	}
}

func TestPointsGainsAndSummary(t *testing.T) {
	r := func(p Policy, f float64, seed uint64, job float64, evicted int, saturated bool) Result {
		return Result{Source: "dc-0", Scaling: Linear, Factor: f, Policy: p, Seed: seed, CensoredMeanJobSeconds: job,
			Evicted: evicted, Saturated: saturated, Utilisation: f / 2}
	}
	results := []Result{
		r(PT, 1, 1, 1000, 40, false), r(PT, 1, 2, 1200, 60, false),
		r(History, 1, 1, 800, 10, false), r(History, 1, 2, 1000, 10, false),
		r(PT, 2, 1, 5000, 100, true), r(History, 2, 1, 4000, 50, false),
	}
	points := Points(results)
	if len(points) != 4 || points[0].Seeds != 2 || points[0].JobSeconds != (Stat{1100, 1000, 1200}) {
		t.Fatalf("points: %+v", points)
	}
	gains := Gains(points)
	if len(gains) != 2 || math.Abs(gains[0].Reduction-100*(1100-900)/1100.0) > 1e-9 || gains[0].EvictionRatio != 5 || !gains[0].Stable {
		t.Fatalf("gain at x1: %+v", gains[0])
	}
	if gains[1].Stable {
		t.Fatalf("x2: PT saturated, yet the gain is stable")
	}
	if s := gains[0].String(); !strings.Contains(s, "faster") {
		t.Fatalf("a positive reduction reads %q", s)
	}
	if s := (Gain{Reduction: -2}).String(); s != "H 2.0% slower than PT" {
		t.Fatalf("a negative reduction reads %q", s)
	}
	sum := Summarise(gains)
	if len(sum) != 1 || sum[0].Points != 1 || sum[0].Skipped != 1 || math.Abs(sum[0].Reduction.Mean-gains[0].Reduction) > 1e-9 {
		t.Fatalf("summary: %+v", sum)
	}
}

func TestEveryPresetValueSaysWhereItComesFrom(t *testing.T) {
	for name, p := range Presets() {
		if len(p.Params) == 0 || p.Seeds < 1 {
			t.Fatalf("%s: no params or seeds", name)
		}
		for _, q := range p.Params {
			if q.Name == "" || q.Value == "" || q.Source == "" {
				t.Errorf("%s: %+v lacks a name, value or source", name, q)
			}
		}
	}
	c := Paper()
	if c.Cores != 12 || c.Reserve != 4 || c.AdmitMargin != 0 || c.Placement != Proportional || !c.ClassConstraint || c.HoldUnfit ||
		c.JobsPerHour != 12 || c.Span.Hours() != 720 {
		t.Fatalf("paper preset: %+v", c)
	}
	if p := Production(); p.Placement != Binpack2 || p.ContainerReuse || p.AdmitMargin != 1 {
		t.Fatalf("production preset: %+v", p)
	}
}

// The job scale makes the arrival rate carry the load: work grows with the
// scale squared (lengths and widths).
func TestJobScaleCarriesTheLoad(t *testing.T) {
	cfg := spikeScenario(PT)
	cfg.Arrivals = nil
	cfg.JobsPerHour, cfg.OfferedLoad = 12, 0.2
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.OfferedLoad-0.2) > 1e-9 || r.JobScale <= 0 {
		t.Fatalf("offered load %.3f at scale %.3f, want 0.2", r.OfferedLoad, r.JobScale)
	}
}

// TestAGainWhereHEvictedNothingEncodes: PT evicted where H evicted nothing
// (H held its jobs), so the ratio is infinite; the JSON summary must still
// encode, with the ratio as null.
func TestAGainWhereHEvictedNothingEncodes(t *testing.T) {
	gains := Gains(Points([]Result{
		{Source: "dc-4", Scaling: Linear, Factor: 1, Policy: PT, Seed: 1, CensoredMeanJobSeconds: 4842, Evicted: 28918},
		{Source: "dc-4", Scaling: Linear, Factor: 1, Policy: History, Seed: 1, CensoredMeanJobSeconds: 85743, Saturated: true},
	}))
	if len(gains) != 1 || !math.IsInf(float64(gains[0].EvictionRatio), 1) {
		t.Fatalf("gains %+v: want one with an infinite eviction ratio", gains)
	}
	b, err := json.Marshal(gains)
	if err != nil || !strings.Contains(string(b), `"eviction_ratio":null`) {
		t.Fatalf("JSON %s, %v: want the ratio as null", b, err)
	}
}

func TestPointsCountTheLongJobsHSteered(t *testing.T) {
	run := func(seed uint64, one, several int, constant, periodic float64) Result {
		return Result{Source: "dc-4", Scaling: Linear, Factor: 1, Policy: History, Seed: seed, ByJobClass: map[string]*ClassResult{
			"long":  {Fits: map[string]int{"long/one": one, "medium/one": 1, "long/combined": several}, TaskSecondsByPattern: map[string]float64{"constant": constant, "periodic": periodic}},
			"short": {Fits: map[string]int{"short/one": 100}, TaskSecondsByPattern: map[string]float64{"constant": 1000}},
		}}
	}
	p := Points([]Result{run(1, 3, 5, 30, 70), run(2, 5, 0, 50, 50)})
	if len(p) != 1 {
		t.Fatalf("%d points, want 1", len(p))
	}
	// Seed 1: 3 typed long + 1 typed medium fit one class; seed 2: 5 + 1.
	if got := p[0].LongFitOne; got.Mean != 5 || got.Min != 4 || got.Max != 6 {
		t.Errorf("long jobs fit in one class %+v, want mean 5 over 4 and 6 (whatever the placer typed them)", got)
	}
	if got := p[0].LongOnConstant; math.Abs(got.Mean-0.4) > 1e-9 || got.Min != 0.3 || got.Max != 0.5 {
		t.Errorf("long work on constant servers %+v, want 0.3 and 0.5 (short jobs' work left out)", got)
	}
}
