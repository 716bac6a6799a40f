//go:build acceptance

package acceptance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/internal/testbed"
)

// testbedRun says the package runs the testbed (make acceptance-testbed):
// it starts its own cluster, so TestMain starts none.
func testbedRun() bool { return os.Getenv("HARVEST_ACCEPTANCE_TESTBED") != "" }

// TestTestbedAccountsForEveryJob runs a short testbed as an operator would
// (`harvest-dev testbed`): 3 clients of 12 cores with 4 reserved replaying
// dc-9 tenants at x10 after 10 days of history, the simulator's stream
// scaled down to about 300 allocations in 6 minutes (what this 2-core host
// starts without falling behind), under H. Every client must be classified before the span,
// its report must account for every job (finished, or unfinished and
// counted), every submission must have reached Nomad through the proxy,
// no reserve breach may outlast the driver's eviction bound, the tasks
// must have read their input through the blob front, and every object
// written before the span must read back whole.
func TestTestbedAccountsForEveryJob(t *testing.T) {
	if !testbedRun() {
		t.Skip("runs the testbed on a cluster of its own: make acceptance-testbed")
	}
	out, runDir := t.TempDir(), t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "harvest-dev"), "testbed", "-policies", "h", "-seeds", "1", "-clients", "3",
		"-speedup", "10", "-trace-hours", "1", "-history-days", "10", "-jobs-per-hour", "20", "-job-scale", "0.05",
		"-setup", "150s", "-drain", "3m", "-out", out, "-run-dir", runDir, "-stack-bin", stack, "-bin", bin)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("harvest-dev testbed: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(out, "h-1", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep testbed.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %d submitted, %d finished, %d unfinished, mean %.0f s (sim %.0f), %d kills, breaches %v, start delay p90 %.1f s, blob %+v",
		rep.Submitted, rep.Finished, rep.Unfinished, rep.JobSeconds.Mean, rep.Simulator.MeanJobSeconds, rep.Kills, rep.Breaches, rep.StartDelay.P90, rep.Blob)
	if len(rep.Labels) != 3 {
		t.Errorf("labels %v: want the 3 clients labelled before the span", rep.Labels)
	}
	for node, l := range rep.Labels {
		if strings.HasPrefix(l, "unclassified") {
			t.Errorf("%s is %s after 10 days of history", node, l)
		}
	}
	if rep.Submitted < 10 || rep.SubmitErrors != 0 {
		t.Errorf("%d jobs submitted, %d refused: want at least 10, none refused", rep.Submitted, rep.SubmitErrors)
	}
	if rep.Finished+rep.Unfinished+rep.SubmitErrors != rep.Submitted || rep.Finished == 0 {
		t.Errorf("jobs unaccounted for: %d submitted, %d finished, %d unfinished", rep.Submitted, rep.Finished, rep.Unfinished)
	}
	if rep.BreachesOverBound != 0 || rep.LongestBreach > rep.BreachBound {
		t.Errorf("breaches %v: %d longer than the %.1f s bound", rep.Breaches, rep.BreachesOverBound, rep.BreachBound)
	}
	for _, png := range []string{"job-times.png", "utilisation.png"} {
		if _, err := os.Stat(filepath.Join(out, png)); err != nil {
			t.Errorf("no %s: %v", png, err)
		}
	}
	harvested := 0.0
	for _, u := range rep.Utilisation {
		harvested = max(harvested, u.Harvested)
	}
	if len(rep.Utilisation) == 0 || harvested == 0 {
		t.Errorf("utilisation %+v: want the harvested allocations' share over time", rep.Utilisation)
	}
	if b := rep.Blob; b == nil || b.Objects != 32 || b.Lost != 0 || b.Reads == 0 {
		t.Errorf("blob tier %+v: want the 32 objects written before the span read by the tasks, none lost", b)
	}
}
