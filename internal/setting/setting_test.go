package setting

import (
	"os"
	"path/filepath"
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

// Tokens joins the list and the file's lines (comments and blank lines
// skipped) and refuses a short token or one with a space, naming it.
func TestTokensJoinsTheListAndTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("# operators\n\n22222222-aaaa-bbbb  # ci\n33333333-cccc-dddd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Tokens([]string{"11111111-0000-0000"}, file, "tokens_file", "token", 16)
	if err != nil || strings.Join(got, ",") != "11111111-0000-0000,22222222-aaaa-bbbb,33333333-cccc-dddd" {
		t.Fatalf("tokens %v, %v", got, err)
	}
	if _, err := Tokens([]string{"11111111-0000-0000", "short"}, "", "tokens_file", "admin token", 16); err == nil || !strings.Contains(err.Error(), "admin token 2: want at least 16 characters") {
		t.Fatalf("a short token: %v", err)
	}
	if _, err := Tokens(nil, filepath.Join(t.TempDir(), "none"), "acl.tokens_file", "token", 16); err == nil || !strings.HasPrefix(err.Error(), "acl.tokens_file: ") {
		t.Fatalf("a missing file: %v", err)
	}
}
