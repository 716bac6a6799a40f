package history

import (
	"fmt"
	"testing"

	"github.com/harvest-platform/harvest/kv"
)

// BenchmarkCacheColdRead is the client side of a cold read (kv.Mem, no
// network): 1,000 tenants x 31 days in bundles, decoded into DayMeans.
func BenchmarkCacheColdRead(b *testing.B) {
	kv := kv.NewMem()
	s := NewStore(kv, "")
	_ = s.SetFormat(ctx, 3)
	first := DateOf(t0)
	bulk := map[TenantID]Series{}
	for k := 0; k < 1000; k++ {
		id := TenantID{"env", fmt.Sprintf("fn-%d", k)}
		_ = s.EnsureTenant(ctx, id, "n")
		bulk[id] = wave(k, first, 31)
	}
	if err := s.PutDays(ctx, bulk); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, _ := s.NewCache()
		if _, err := c.Refresh(ctx, first, first+30); err != nil {
			b.Fatal(err)
		}
	}
}
