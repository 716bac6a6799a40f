package schedsim

import (
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history/synth"
)

func benchTenants(servers, days int) []Tenant {
	p := synth.Profiles(1, servers/6)[0]
	p.Days, p.ReimageDays = 8+days, 1
	return FromDatacenter(synth.Generate(p), servers)
}

// BenchmarkDay300Servers: one simulated day of 300 servers per op, per policy.
func BenchmarkDay300Servers(b *testing.B) {
	tenants := benchTenants(300, 1)
	for _, p := range []Policy{Stock, PT, History} {
		b.Run(string(p), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Run(Config{Seed: 1, Policy: p, Tenants: tenants, HistoryDays: 8, Span: 24 * time.Hour}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
