package escalsim

import (
	"testing"
	"time"
)

// BenchmarkDefaultTwoDays: two days of the default cluster's jobs per op,
// strict and with escalation and greylisting.
func BenchmarkDefaultTwoDays(b *testing.B) {
	cl, jobs := shortDefault(b, 48)
	for name, c := range map[string]Config{"strict": {}, "escalate+greylist": {Escalate: true, Delay: 10 * time.Minute, Greylist: true}} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Run(cl, jobs, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
