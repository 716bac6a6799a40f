//go:build acceptance

package acceptance

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/burn"
)

// TestMeasureEvictionUnderStress repeats the eviction test's core
// (TestHarvestDriverEvictsYoungestFirstAndWorkMovesOn: three harvested tasks
// of a quarter core on client-1, a 0.6-core burner joins its primary
// cgroup, only the youngest may go) HARVEST_MEASURE_RUNS times (20) while
// the machine is saturated: busy loops at nice 0, twice the CPUs, and two
// threads starting and ending short-lived processes back to back. Every run
// must evict the youngest alone; it reports each run's evictions and the
// driver's "needs N cores". HARVEST_MEASURE_BUSY sets the busy loops per CPU
// (2) and HARVEST_MEASURE_BURST the process-starting threads (2). Minutes,
// so only with HARVEST_MEASURE=1:
//
//	HARVEST_MEASURE=1 go test -tags acceptance -count=1 -v -timeout 60m -run TestMeasureEvictionUnderStress ./acceptance/
func TestMeasureEvictionUnderStress(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") == "" {
		t.Skip("minutes of repeated evictions under stress: HARVEST_MEASURE=1")
	}
	runs := envInt("HARVEST_MEASURE_RUNS", 20)
	stop := saturate(t, envInt("HARVEST_MEASURE_BUSY", 2)*runtime.NumCPU(), envInt("HARVEST_MEASURE_BURST", 2))
	t.Logf("stress: %d busy loops at nice 0, %d threads starting short-lived processes", envInt("HARVEST_MEASURE_BUSY", 2)*runtime.NumCPU(),
		envInt("HARVEST_MEASURE_BURST", 2))
	defer stop()
	const node = "client-1"
	spurious, missed := 0, 0
	for i := 1; i <= runs; i++ {
		n, youngestOnly, msgs := evictOnce(t, node)
		switch {
		case n == 0:
			missed++
		case !youngestOnly:
			spurious++
		}
		t.Logf("run %d/%d: %d evicted, youngest alone %v: %s", i, runs, n, youngestOnly, strings.Join(msgs, " | "))
	}
	t.Logf("%d runs under stress: %d evicted more than the youngest, %d evicted none", runs, spurious, missed)
	if spurious > 0 || missed > 0 {
		t.Errorf("%d of %d runs evicted more than the youngest and %d none; want the youngest alone every time", spurious, runs, missed)
	}
}

// evictOnce starts three harvested tasks of a quarter core on node one after
// another, makes its primary burn 0.6 cores, and returns how many tasks
// were evicted within 3 s of the first eviction, whether only the youngest,
// and the eviction messages. Everything it started is gone when it returns.
func evictOnce(t *testing.T, node string) (int, bool, []string) {
	t.Helper()
	var jobs []string
	defer func() {
		for _, j := range jobs {
			stopNow(t, j)
		}
	}()
	release := onlyOn(t, node)
	for i := 0; i < 3; i++ {
		job := startHarvestedOn(t, node, fmt.Sprintf("acc-stress%d", i))
		jobs = append(jobs, job)
		time.Sleep(500 * time.Millisecond)
	}
	release()
	youngest := allocations(t, jobs[2])[0]
	stopBurner := startBurner(t, node, 0.6)
	defer stopBurner()
	var first time.Time
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if evictedIn(t, jobs, node) > 0 {
			first = time.Now()
			break
		}
	}
	if first.IsZero() {
		return 0, false, nil
	}
	time.Sleep(3 * time.Second)
	var msgs []string
	n, onlyYoungest := 0, true
	for _, j := range jobs {
		for _, a := range allocations(t, j) {
			if msg, _, ok := evictionEvent(a); ok && a.NodeName == node {
				n++
				msgs = append(msgs, a.ID[:8]+": "+msg)
				onlyYoungest = onlyYoungest && a.ID == youngest.ID
			}
		}
	}
	stopBurner()
	// the admission window remembers the spike: let it pass before the next run
	time.Sleep(5 * time.Second)
	return n, onlyYoungest && n == 1, msgs
}

// startHarvestedOn runs a harvested job of one quarter-core task on node (the
// only eligible one) and waits until it runs, starting it again while the
// driver refuses it (its admission window still remembers a spike).
func startHarvestedOn(t *testing.T, node, prefix string) string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		job := uniqueName(prefix)
		nomadCLI(t, "job", "run", "-detach", harvestJob(t, job, 1, mhzFor(t, node, 0.25), 300, ""))
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			allocs, _, err := nomadClient(t).Jobs().Allocations(job, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(allocs) == 1 && allocs[0].ClientStatus == nomadapi.AllocClientStatusRunning && allocs[0].NodeName == node {
				return job
			}
			if len(allocs) > 0 && allocs[0].ClientStatus == nomadapi.AllocClientStatusFailed {
				break
			}
		}
		stopNow(t, job)
	}
	t.Fatalf("no harvested task would start on %s", node)
	return ""
}

func evictedIn(t *testing.T, jobs []string, node string) int {
	n := 0
	for _, j := range jobs {
		for _, a := range allocations(t, j) {
			if _, _, ok := evictionEvent(a); ok && a.NodeName == node {
				n++
			}
		}
	}
	return n
}

// saturate runs busy loops at nice 0 and burst threads starting short-lived
// processes (burn.Saturate) until the test ends or stop.
func saturate(t *testing.T, busyLoops, burst int) (stop func()) {
	t.Helper()
	stop, err := burn.Saturate(busyLoops, burst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stop
}

// stopNow stops a job, waits until none of its allocations runs, and
// purges it.
func stopNow(t *testing.T, job string) {
	t.Helper()
	c := nomadClient(t)
	if _, _, err := c.Jobs().Deregister(job, false, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		allocs, _, err := c.Jobs().Allocations(job, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, a := range allocs {
			if a.ClientStatus == nomadapi.AllocClientStatusRunning || a.ClientStatus == nomadapi.AllocClientStatusPending {
				live++
			}
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still runs a minute after it was stopped", job)
		}
	}
	_, _, _ = c.Jobs().Deregister(job, true, nil)
}
