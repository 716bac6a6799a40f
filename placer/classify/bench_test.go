package classify

import (
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
