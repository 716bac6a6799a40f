package classify

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harvest-platform/harvest/history"
)

// TestDailyComponentMatchesTheFFT: a constant tenant's daily amplitude and
// phase, from the one DFT bin, are what the full spectrum gives.
func TestDailyComponentMatchesTheFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, days := range []int{7, 27, 30} {
		x := make([]float64, days*history.SlotsPerDay)
		phase := rng.Float64() * 2 * math.Pi
		for j := range x {
			x[j] = 40 + 1.5*math.Sin(2*math.Pi*float64(j)/float64(history.SlotsPerDay)+phase) + rng.NormFloat64()
		}
		mean, _ := meanSD(x)
		var full, one Features
		spectrum(x, mean, Default(), &full, new(scratch))
		dailyComponent(wholeDays(x), mean, &one)
		if full.DailyAmp < 1 || math.Abs(one.DailyAmp-full.DailyAmp) > 1e-9*full.DailyAmp ||
			math.Abs(one.DailyPhase-full.DailyPhase) > 1e-9 {
			t.Fatalf("%d days: one bin gives amplitude %v phase %v, the FFT %v %v",
				days, one.DailyAmp, one.DailyPhase, full.DailyAmp, full.DailyPhase)
		}
	}
}

// TestConstantTenantsSkipTheSpectrum: below ConstantSD the pattern is
// constant whatever the spectrum, so Strength and Period are not computed;
// above it they are.
func TestConstantTenantsSkipTheSpectrum(t *testing.T) {
	x := make([]float64, 30*history.SlotsPerDay)
	for j := range x {
		x[j] = 50 + 3*math.Sin(2*math.Pi*float64(j)/float64(history.SlotsPerDay)) // SD 2.1: constant, though periodic
	}
	s := history.Series{Values: x}
	f, err := Extract(s, Default())
	if err != nil {
		t.Fatal(err)
	}
	if f.Pattern(Default()) != Constant || f.Strength != 0 || f.Period != 0 || math.Abs(f.DailyAmp-3) > 0.01 {
		t.Fatalf("constant tenant: %+v", f)
	}
	for j := range x {
		x[j] = 50 + 20*math.Sin(2*math.Pi*float64(j)/float64(history.SlotsPerDay))
	}
	f, _ = Extract(s, Default())
	if f.Pattern(Default()) != Periodic || f.Period != 24*60*60*1e9 || math.Abs(f.DailyAmp-20) > 0.01 {
		t.Fatalf("periodic tenant: %+v", f)
	}
}
