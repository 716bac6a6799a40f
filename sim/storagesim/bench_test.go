package storagesim

import (
	"testing"

	"github.com/harvest-platform/harvest/history/synth"
)

// benchDatacenter is dc-0 with about 1,000 servers and a year of reimages
// after a year of history.
func benchDatacenter(b *testing.B) Datacenter {
	b.Helper()
	p := synth.Profiles(1, 110)[0]
	p.Days, p.ReimageDays = 2, 2*365
	return FromSynth(synth.Generate(p), 365)
}

// BenchmarkYear simulates a year of 100,000 blocks per policy at R=3 with
// half the space filled; blocks/s is the simulator's speed.
func BenchmarkYear(b *testing.B) {
	dc := benchDatacenter(b)
	servers := 0
	for _, t := range dc.Tenants {
		servers += len(t.Servers)
	}
	for _, pol := range []Policy{Stock, Grid} {
		b.Run(string(pol), func(b *testing.B) {
			const blocks = 100000
			cfg := Config{Seed: 1, Policy: pol, Replicas: 3, Blocks: blocks, RepairPerHour: 30, Capacity: 2 * blocks * 3 / servers}
			for b.Loop() {
				if _, err := Run(dc, cfg, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(blocks*b.N)/b.Elapsed().Seconds(), "blocks/s")
		})
	}
}
