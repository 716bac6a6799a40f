package escalation

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func TestEscalationSteps(t *testing.T) {
	delay := 30 * time.Second
	for _, tc := range []struct {
		waited time.Duration
		want   Step
	}{{0, Chosen}, {29 * time.Second, Chosen}, {30 * time.Second, MoreClass}, {61 * time.Second, AnyNode}, {time.Hour, AnyNode}} {
		if got := Escalate(t0, t0.Add(tc.waited), delay); got != tc.want {
			t.Errorf("after %s: %s, want %s", tc.waited, got, tc.want)
		}
	}
	if got := Widen(MoreClass, []string{"a"}, []string{"a", "b", "c"}, 1); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("widened to %v", got)
	}
	if got := Widen(AnyNode, []string{"a"}, nil, 1); got != nil {
		t.Fatalf("any node kept classes %v", got)
	}
}
