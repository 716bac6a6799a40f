package hybridsim

import "testing"

// BenchmarkHeavySynthetic: 3000 Sparrow-like jobs on 300 nodes at load 0.9
// per op, per policy, with stealing.
func BenchmarkHeavySynthetic(b *testing.B) {
	jobs := heavy(b)
	for _, p := range []Policy{NoPartition, Partition} {
		b.Run(string(p), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Run(Config{Nodes: 300, Policy: p, StealProbes: 10, Seed: 1}, jobs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
