package daemonlogs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/agent/strategy/escalator"
)

// The error lines counted are this run's and unexpected: a line an earlier
// run logged in the same run folder is left out, one with no timestamp
// counts, the driver's refusals (counted as refused starts) are left out,
// and so is a log no daemon wrote in this run (a client of a larger run).
func TestErrorLinesCountOnlyThisRunsUnexpectedLines(t *testing.T) {
	dir := t.TempDir()
	path, stale := filepath.Join(dir, "nomad-client-1.log"), filepath.Join(dir, "nomad-client-7.log")
	log := "2026-11-29T20:50:04.115Z [ERROR] client.alloc_runner: postrun failed\n" +
		"2026-11-30T00:03:00.000Z [INFO]  client: started\n" +
		"2026-11-30T00:05:19.828Z [ERROR] client.alloc_runner.task_runner: running driver failed: error=\"rpc error: code = Unavailable\"\n" +
		"2026-11-30T00:05:20.000Z [ERROR] client.alloc_runner.task_runner: running driver failed: error=\"rpc error: code = FailedPrecondition desc = " +
		contract.RefusalPrefix + "(1.00 cores, 32 MiB) would leave 0.50 cores\"\n" +
		"    [ERROR] a line with no timestamp\n"
	for _, f := range []string{path, stale} {
		if err := os.WriteFile(f, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Date(2026, 11, 30, 0, 2, 0, 0, time.UTC)
	if err := os.Chtimes(stale, since.Add(-time.Hour), since.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := ErrorLines([]string{path, stale}, since)
	if got["nomad-client-1.log"] != 2 {
		t.Errorf("%d error lines since %s, want 2 (the refusal left out)", got["nomad-client-1.log"], since)
	}
	if n, ok := got["nomad-client-7.log"]; ok {
		t.Errorf("a log last written before the run is listed (%d lines)", n)
	}
}

// The run's escalations are counted from the placer's log by the kind of
// wait, only the run's own.
func TestEscalationsAreCountedByKindOfWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "placer.log")
	log := "2026-11-29T20:50:04.115Z [INFO]  placer.escalator: " + escalator.LogBlocked + ": job=old\n" +
		"2026-11-30T00:03:00.000Z [INFO]  placer.escalator: " + escalator.LogBlocked + ": job=a\n" +
		"2026-11-30T00:04:00.000Z [INFO]  placer.escalator: " + escalator.LogPartlyPlaced + " by its constraints alone: job=b\n" +
		"2026-11-30T00:05:00.000Z [INFO]  placer.escalator: " + escalator.LogPartlyPlaced + " by its constraints alone: job=c\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got := Escalations(path, time.Date(2026, 11, 30, 0, 2, 0, 0, time.UTC))
	if got["blocked"] != 1 || got["partly_placed"] != 2 {
		t.Fatalf("escalations %v, want 1 blocked and 2 partly placed", got)
	}
}
