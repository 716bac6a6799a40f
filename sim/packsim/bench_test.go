package packsim

import (
	"testing"

	"github.com/harvest-platform/harvest/placer/packing"
)

// BenchmarkRun simulates a day of the default synthetic workload (about
// 29,000 tasks) on 100 nodes per policy.
func BenchmarkRun(b *testing.B) {
	w := DefaultSynthetic(1)
	w.Hours = 24
	tasks := w.Tasks()
	for _, p := range []Policy{Spread, BinPack, Packed} {
		b.Run(string(p), func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(tasks, Config{Seed: 1, Policy: p, Nodes: 100, NodeMem: 6144, Packing: packing.Default(), ReleaseDelay: 600}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tasks)), "tasks/op")
		})
	}
}
