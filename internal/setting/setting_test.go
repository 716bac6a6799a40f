package setting

import (
	"strings"
	"testing"
	"time"
)

func TestPositiveDuration(t *testing.T) {
	if d, err := PositiveDuration("packing.interval", "", 10*time.Second); err != nil || d != 10*time.Second {
		t.Fatalf("empty: %v, %v; want the default", d, err)
	}
	if d, err := PositiveDuration("packing.interval", "90s", 10*time.Second); err != nil || d != 90*time.Second {
		t.Fatalf("90s: %v, %v", d, err)
	}
	for _, bad := range []string{"0s", "-1m", "ten seconds", "10"} {
		_, err := PositiveDuration("classify.interval", bad, 24*time.Hour)
		if err == nil || !strings.Contains(err.Error(), `classify.interval "`+bad+`"`) || !strings.Contains(err.Error(), `such as "24h"`) {
			t.Errorf("%q: error %v, want one naming the setting, the value and an example", bad, err)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{24 * time.Hour: "24h", 90 * time.Second: "1m30s", 10 * time.Minute: "10m", 1500 * time.Millisecond: "1.5s"} {
		if got := shortDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
