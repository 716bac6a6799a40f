package manager

import (
	"testing"
	"time"
)

// The restart delay doubles per failed attempt up to the cap, jittered to
// between half and all of it.
func TestNextDelayBacksOffWithJitter(t *testing.T) {
	in := &instance[*fixedSource]{sup: Supervision{RestartBackoff: time.Second, RestartBackoffMax: 8 * time.Second}}
	for _, full := range []time.Duration{1, 2, 4, 8, 8, 8} {
		full *= time.Second
		for range 20 {
			attempt := in.attempt
			d := in.nextDelay()
			in.attempt = attempt
			if d < full/2 || d > full {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, full/2, full)
			}
		}
		in.attempt++
	}
}
