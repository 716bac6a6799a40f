package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedPercentile is the rank rule by sorting a copy without the NaNs:
// the reference Percentile is held to, and the baseline of its benchmark.
func sortedPercentile(values []float64, p float64) float64 {
	s := slices.DeleteFunc(slices.Clone(values), func(v float64) bool { return v != v })
	if len(s) == 0 {
		return 0
	}
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// Percentile is the sorted rank's value, exactly, whether the values lie
// on the store's 0.01-point grid or between its points, in [0, 100] or far
// outside it; gaps are left out, and no value gives 0.
func TestPercentileIsTheNearestRankExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	onGrid, offGrid := make([]float64, 5000), make([]float64, 5000)
	for i := range onGrid {
		onGrid[i] = float64(rng.IntN(10001)) / 100
		offGrid[i] = rng.Float64() * 100
	}
	onGrid[7], offGrid[9] = math.NaN(), math.NaN()
	for _, x := range [][]float64{onGrid, offGrid, {-3, 101, 250, 300}, {12.344, 12.346, 12.35}, {math.Inf(-1), -1e300, 1e300, math.Inf(1), 50, 100.004}} {
		for _, q := range []float64{0, 0.25, 0.5, 0.95, 0.999} {
			if got, want := Percentile(x, q), sortedPercentile(x, q); got != want {
				t.Fatalf("q%.3f of %d values: %v, want the sorted rank's %v", q, len(x), got, want)
			}
		}
	}
	var v []float64
	for i := 100; i >= 1; i-- { // 1..100, unsorted, with gaps
		v = append(v, float64(i), math.NaN())
	}
	if got := Percentile(v, 0.95); got != 96 {
		t.Fatalf("p95 %v, want 96 (rank 95 of 100 samples, gaps left out)", got)
	}
	if got := Percentile([]float64{math.NaN()}, 0.95); got != 0 {
		t.Fatalf("p95 without samples %v, want 0", got)
	}
}

// BenchmarkPercentile: counting a 30-day series against sorting it, side
// by side, on the store's grid and between its points (interpolated gaps).
func BenchmarkPercentile(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	onGrid, between := make([]float64, 30*24*30), make([]float64, 30*24*30) // 30 days of 2-minute slots
	for i := range onGrid {
		onGrid[i] = float64(rng.IntN(10001)) / 100
		between[i] = rng.Float64() * 100
	}
	for _, in := range []struct {
		name string
		x    []float64
	}{{"on-grid", onGrid}, {"between", between}} {
		b.Run(in.name+"/counting", func(b *testing.B) {
			for b.Loop() {
				Percentile(in.x, 0.95)
			}
		})
		b.Run(in.name+"/sorting", func(b *testing.B) {
			for b.Loop() {
				sortedPercentile(in.x, 0.95)
			}
		})
	}
}
