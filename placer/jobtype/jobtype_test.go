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

// Ten jobs of 10..100 s doing 1..10 units of work (55 in all): short takes
// the shortest jobs up to 20% of the work (1+2+3+4 = 10 units, the 50 s job
// would make it 15 > 11), long the longest up to 40% (10+9 = 19; 8 more
// would be 27 > 22).
func TestSplitFollowsTheWork(t *testing.T) {
	var runs []Run
	for i := 1; i <= 10; i++ {
		runs = append(runs, Run{Length: time.Duration(i*10) * time.Second, Work: float64(i)})
	}
	th := Split(runs, 0.2, 0.4)
	if th.Short != 50*time.Second || th.Long != 80*time.Second {
		t.Fatalf("thresholds %v / %v, want 50s / 80s", th.Short, th.Long)
	}
	if got := th.Of(40*time.Second, true); got != Short {
		t.Errorf("40 s: %s", got)
	}
	if got := th.Of(90*time.Second, true); got != Long {
		t.Errorf("90 s: %s", got)
	}
	if got := th.Of(70*time.Second, true); got != Medium {
		t.Errorf("70 s: %s", got)
	}
	if Split(nil, 0.2, 0.4) != Default() {
		t.Error("no history: want the defaults")
	}
}
