package schedsim

import (
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history/synth"
)

func benchTenants(servers, days int) []Tenant {
	p := synth.Profiles(1, servers/6)[0]
	p.Days, p.ReimageDays = 8+days, 1
	dc := synth.Generate(p)
	var out []Tenant
	left := servers
	for i := 0; left > 0; i = (i + 1) % len(dc.Tenants) {
		n := min(left, len(dc.Tenants[i].Nodes))
		out = append(out, Tenant{ID: dc.Tenants[i].ID.String() + string(rune('a'+len(out)%26)) + itoa(len(out)), Servers: n, Series: dc.Tenants[i].Series})
		left -= n
	}
	return out
}

// BenchmarkMonthPerPolicy: one simulated day of 300 servers per op.
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
