package health

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestWarnEpisodeLogsOncePerEpisode: a failure is logged when it begins an
// episode, not again while it lasts, and again after a success ended it.
func TestWarnEpisodeLogsOncePerEpisode(t *testing.T) {
	var logs strings.Builder
	h := &Checker{log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})}
	failed := errors.New("consul down")
	for _, err := range []error{failed, failed, nil, failed} {
		if got := h.warnEpisode("x", err, "ledger trouble"); got != err {
			t.Fatalf("warnEpisode returned %v, want %v", got, err)
		}
	}
	if n := strings.Count(logs.String(), "ledger trouble"); n != 2 {
		t.Fatalf("logged %d times, want 2 (two episodes):\n%s", n, logs.String())
	}
}
