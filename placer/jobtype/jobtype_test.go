package jobtype

import (
	"testing"
	"time"
)

func TestTypes(t *testing.T) {
	th := Default()
	for _, tc := range []struct {
		d     time.Duration
		known bool
		want  string
	}{{0, false, Medium}, {10 * time.Second, true, Short}, {173 * time.Second, true, Medium}, {300 * time.Second, true, Medium}, {433 * time.Second, true, Medium}, {434 * time.Second, true, Long}} {
		if got := th.Of(tc.d, tc.known); got != tc.want {
			t.Errorf("%s known=%v: %s, want %s", tc.d, tc.known, got, tc.want)
		}
	}
}
