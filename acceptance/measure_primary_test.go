//go:build acceptance

package acceptance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// What harvesting costs the primary tenant, and what the harvested tasks
// get, measured on the real cluster (issue 18). Minutes each, so only with
// HARVEST_MEASURE=1:
//
//	HARVEST_MEASURE=1 go test -tags acceptance -count=1 -v -timeout 60m \
//	    -run 'TestMeasurePrimaryLatency|TestMeasureHarvestedThroughput|TestMeasureEvictionLatency' ./acceptance/
//
// HARVEST_MEASURE_ROUNDS (5) and HARVEST_MEASURE_PERIOD (15s) size the
// latency measurement.

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

// busyJob runs count busy-loop tasks of cores each under driver ("harvest"
// or "raw_exec") on node, and returns their allocations once all run, and
// a stop that waits until they are gone. A start the harvest driver
// refuses (the admission window still remembers a spike) is tried again.
func busyJob(t *testing.T, node, driver string, count int, cores float64) ([]*nomadapi.AllocationListStub, func()) {
	t.Helper()
	cmd, args := busyLoop()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		job := uniqueName("acc-busy-" + strings.ReplaceAll(driver, "_", ""))
		purgeJob(t, job)
		nomadCLI(t, "job", "run", "-detach", harvestJobSpec{ID: job, Count: count, CPU: mhzFor(t, node, cores), Memory: 32,
			Command: cmd, Args: args, Extra: pinTo(node), Driver: driver}.file(t))
		stop := func() {
			nomadCLI(t, "job", "stop", "-detach", job)
			for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				allocs, _, err := nomadClient(t).Jobs().Allocations(job, false, nil)
				if err != nil {
					t.Fatal(err)
				}
				live := 0
				for _, a := range allocs {
					if a.ClientStatus == "running" || a.ClientStatus == "pending" {
						live++
					}
				}
				if live == 0 {
					return
				}
			}
			t.Fatalf("job %s did not stop", job)
		}
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			allocs, _, err := nomadClient(t).Jobs().Allocations(job, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			running, failed := 0, 0
			for _, a := range allocs {
				switch a.ClientStatus {
				case "running":
					running++
				case "failed":
					failed++
				}
			}
			if running == count {
				return allocs, stop
			}
			if failed > 0 {
				break
			}
		}
		stop()
		time.Sleep(time.Second) // a refused start: try again once the window has moved on
	}
	t.Fatalf("%d busy %s tasks did not start on %s", count, driver, node)
	return nil, nil
}

// TestMeasurePrimaryLatency: a latency-critical stand-in (2 ms of CPU per
// request, 200 requests/s open loop) in client-2's primary cgroup, measured
// in rounds of five periods in rotating order: alone; beside two busy
// harvested tasks (harvest driver); beside the same tasks under raw_exec;
// during a primary spike (a 0.9-core burner in the primary cgroup) with
// the harvested tasks there when it begins; and the same spike with no
// harvested tasks. It reports p50/p99/p999 and each period's ratios to the
// round's "alone", and the median ratio over the rounds.
func TestMeasurePrimaryLatency(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("set HARVEST_MEASURE=1 to measure the primary tenant's latency (takes minutes)")
	}
	const node, rate = "client-2", 200
	rounds, period := envInt("HARVEST_MEASURE_ROUNDS", 5), envDuration("HARVEST_MEASURE_PERIOD", 15*time.Second)
	addr := startStandIn(t, node)
	latencies(addr, rate, 3*time.Second) // warm up
	conds := []string{"alone", "harvest", "raw_exec", "spike+harvest", "spike alone"}
	got := map[string][][3]float64{}
	for r := range rounds {
		for i := range conds {
			cond := conds[(i+r)%len(conds)]
			var stopJob, stopBurn func()
			switch cond {
			case "harvest", "spike+harvest":
				_, stopJob = busyJob(t, node, "harvest", 2, 0.1)
			case "raw_exec":
				_, stopJob = busyJob(t, node, "raw_exec", 2, 0.1)
			}
			if strings.HasPrefix(cond, "spike") {
				stopBurn = startBurner(t, node, 0.9)
			}
			lat, failed := latencies(addr, rate, period)
			if stopBurn != nil {
				stopBurn()
			}
			if stopJob != nil {
				stopJob()
			}
			q := quantiles(lat)
			got[cond] = append(got[cond], q)
			load, _ := os.ReadFile("/proc/loadavg")
			t.Logf("round %d %-13s p50/p99/p999 %s ms  (%d requests, %d failed; loadavg %s)", r+1, cond, fmtQ(q), len(lat), failed,
				strings.Join(strings.Fields(string(load))[:3], " "))
		}
	}
	t.Logf("primary p50 / p99 / p999 relative to alone in the same round (median of %d rounds; per round in brackets):", rounds)
	var harvestP99 float64
	for _, cond := range conds[1:] {
		var cells []string
		for k, name := range []string{"p50", "p99", "p999"} {
			var ratios []string
			var xs []float64
			for r := range rounds {
				x := got[cond][r][k] / got["alone"][r][k]
				xs = append(xs, x)
				ratios = append(ratios, fmt.Sprintf("%.2f", x))
			}
			cells = append(cells, fmt.Sprintf("%s %.3f [%s]", name, median(xs), strings.Join(ratios, " ")))
			if cond == "harvest" && name == "p99" {
				harvestP99 = median(xs)
			}
		}
		t.Logf("  %-13s %s", cond, strings.Join(cells, "  "))
	}
	var alone []float64
	for r := range rounds {
		alone = append(alone, got["alone"][r][1])
	}
	t.Logf("  alone p99 per round (ms): %v", alone)
	if harvestP99 > 1.05 {
		t.Errorf("primary p99 beside harvested tasks is %.3f x alone (median), goal <= 1.05", harvestP99)
	}
}

// TestMeasureHarvestedThroughput: with client-2's primary tenant idle, two
// busy tasks under the harvest driver and the same two under raw_exec, a
// minute each, twice in turn: the CPU-seconds per minute their processes
// got. Every other process on the machine counts as primary to the
// harvested tasks (they run SCHED_IDLE, capped at capacity - reserve = 1.5
// cores), so the machine's load is logged beside each minute.
func TestMeasureHarvestedThroughput(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("set HARVEST_MEASURE=1 to measure harvested throughput (takes minutes)")
	}
	const node = "client-2"
	minute := envDuration("HARVEST_MEASURE_MINUTE", time.Minute)
	perMinute := map[string][]float64{}
	for round := range 2 {
		for _, driver := range []string{"harvest", "raw_exec"} {
			allocs, stop := busyJob(t, node, driver, 2, 0.25)
			var pids []int
			for _, a := range allocs {
				procs := filepath.Join("/sys/fs/cgroup/freezer/nomad", a.ID+".work", "cgroup.procs")
				for _, f := range strings.Fields(readTrim(procs)) {
					pid, _ := strconv.Atoi(f)
					pids = append(pids, pid)
				}
			}
			if len(pids) < 2 {
				t.Fatalf("%s: task processes %v", driver, pids)
			}
			before, began := cpuSeconds(t, pids...), time.Now()
			load0, _ := os.ReadFile("/proc/loadavg")
			time.Sleep(minute)
			used := (cpuSeconds(t, pids...) - before) * time.Minute.Seconds() / time.Since(began).Seconds()
			stop()
			perMinute[driver] = append(perMinute[driver], used)
			t.Logf("round %d %-8s %.1f CPU-seconds per minute (%.2f cores) (loadavg before %s)", round+1, driver, used,
				used/60, strings.Join(strings.Fields(string(load0))[:3], " "))
		}
	}
	h, r := median(perMinute["harvest"]), median(perMinute["raw_exec"])
	t.Logf("harvested CPU-seconds per minute with the primary idle: harvest %.1f, raw_exec %.1f: ratio %.2f", h, r, h/r)
}
