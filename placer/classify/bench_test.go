package classify

import (
	"math"
	"slices"
	"testing"

	"github.com/harvest-platform/harvest/history/synth"
)

// BenchmarkClassify5000Tenants classifies 5,000 tenants x 30 days of
// 2-minute samples (21,600 each), the size of a large datacenter. The series
// come from a pool of 100 synthetic tenants reused round-robin, so that the
// benchmark measures classification, not generation or 864 MB of input.
func BenchmarkClassify5000Tenants(b *testing.B) {
	p := synth.DefaultProfile(5, 100)
	p.Days = 30
	dc := synth.Generate(p)
	inputs := make([]Input, 5000)
	for i := range inputs {
		tn := dc.Tenants[i%len(dc.Tenants)]
		inputs[i] = Input{Tenant: tn.ID.String() + "-" + string(rune('a'+i%26)), Nodes: tn.Nodes, Series: tn.Series}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		table := Classify(inputs, Default())
		if len(table.Classes) == 0 {
			b.Fatal("no classes")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/5000, "ns/tenant")
}

// BenchmarkExtractOneTenant is the per-tenant FFT feature cost.
func BenchmarkExtractOneTenant(b *testing.B) {
	p := synth.DefaultProfile(5, 1)
	p.Days = 30
	s := synth.Generate(p).Tenants[0].Series
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Extract(s, Default()); err != nil {
			b.Fatal(err)
		}
	}
}

// sortedPercentile is the sorting percentile the counting one replaced,
// kept as the baseline of BenchmarkPercentile.
func sortedPercentile(x []float64, p float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkPercentile compares the counting percentile with sorting, side
// by side on the same 30-day series.
func BenchmarkPercentile(b *testing.B) {
	p := synth.DefaultProfile(5, 1)
	p.Days = 30
	x := synth.Generate(p).Tenants[0].Series.Values
	if got, want := percentile(x, 0.95), sortedPercentile(x, 0.95); math.Abs(got-want) > 0.01 {
		b.Fatalf("counting percentile %.3f, sorting %.3f", got, want)
	}
	b.Run("counting", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			percentile(x, 0.95)
		}
	})
	b.Run("sorting", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sortedPercentile(x, 0.95)
		}
	})
}

// The counting percentile is the sorting one's, at the history's 0.01-point
// resolution, for values on that grid, between it, and out of [0, 100].
func TestCountingPercentileMatchesSorting(t *testing.T) {
	p := synth.DefaultProfile(5, 3)
	p.Days = 30
	for _, tn := range synth.Generate(p).Tenants {
		x := slices.Clone(tn.Series.Values)
		for i := range x {
			if x[i] != x[i] {
				x[i] = 50
			}
		}
		for _, q := range []float64{0, 0.5, 0.95, 0.999} {
			if got, want := percentile(x, q), sortedPercentile(x, q); math.Abs(got-want) > 0.005+1e-9 {
				t.Fatalf("%s q%.3f: counting %.4f, sorting %.4f", tn.ID, q, got, want)
			}
		}
	}
	if got := percentile([]float64{-3, -0.001, 101, 250}, 0.25); got != 0 {
		t.Fatalf("below 0 counts as 0: %v", got)
	}
	if got := percentile([]float64{-3, 101, 250, 300}, 0.75); got != 100 {
		t.Fatalf("above 100 counts as 100: %v", got)
	}
	if got := percentile([]float64{12.344, 12.346, 12.35}, 0.5); got != 12.35 {
		t.Fatalf("between the grid's points: %v, want 12.346 rounded to 12.35", got)
	}
}
