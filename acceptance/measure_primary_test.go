//go:build acceptance

package acceptance

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/harvest-platform/harvest/internal/proc"
	"github.com/harvest-platform/harvest/internal/standin"
)

// What harvesting costs the primary tenant, and what the harvested tasks
// get, measured on the real cluster (issue 18). Minutes each, so only with
// HARVEST_MEASURE=1:
//
//	HARVEST_MEASURE=1 go test -tags acceptance -count=1 -v -timeout 60m \
//	    -run 'TestMeasurePrimaryLatency|TestMeasureHarvestedThroughput|TestMeasureEvictionLatency' ./acceptance/
//
// HARVEST_MEASURE_CYCLES, _WINDOW, _ROUNDS and _PERIOD size the latency
// measurement (below), HARVEST_MEASURE_MINUTE the throughput one.
// HARVEST_MEASURE_NICE runs the latency stand-in at that nice (e.g. -10),
// to shield it from the rest of a shared machine; the harvested and
// raw_exec tasks keep their own priorities.

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
// request, 200 requests/s open loop) in client-2's primary cgroup.
//
// Steady state: two busy tasks under the harvest driver and the same two
// under raw_exec run on client-2 throughout, stopped (SIGSTOP) but when
// their window comes: windows of HARVEST_MEASURE_WINDOW (3 s) cycle alone /
// harvest / raw_exec, HARVEST_MEASURE_CYCLES (40) times, so that each
// condition sees the same background load of this shared machine. Reported:
// p50/p99/p999 of all of a condition's requests, their ratios to alone, and
// the median ratio over 5 blocks of consecutive cycles.
//
// Spike: HARVEST_MEASURE_ROUNDS (5) rounds of a 0.9-core burner in the
// primary cgroup for HARVEST_MEASURE_PERIOD (10 s), once with two busy
// harvested tasks running when it begins (the guard caps, suppresses and
// evicts them) and once without.
func TestMeasurePrimaryLatency(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("set HARVEST_MEASURE=1 to measure the primary tenant's latency (takes minutes)")
	}
	const node, rate = "client-2", 200
	cycles, window := envInt("HARVEST_MEASURE_CYCLES", 40), envDuration("HARVEST_MEASURE_WINDOW", 3*time.Second)
	blocks := min(5, cycles)
	rounds, period := envInt("HARVEST_MEASURE_ROUNDS", 5), envDuration("HARVEST_MEASURE_PERIOD", 10*time.Second)
	addr, standInPID := startStandIn(t, node)
	standin.Latencies(addr, rate, 3*time.Second) // warm up

	hAllocs, stopH := busyJob(t, node, "harvest", 2, 0.1)
	rAllocs, stopR := busyJob(t, node, "raw_exec", 2, 0.1)
	pids := map[string][]int{"harvest": allocPIDs(t, hAllocs), "raw_exec": allocPIDs(t, rAllocs), "bare": bareLoops(t, 2)}
	signal := func(driver string, sig syscall.Signal) {
		for _, pid := range pids[driver] {
			_ = syscall.Kill(pid, sig)
		}
	}
	for d := range pids {
		signal(d, syscall.SIGSTOP)
	}
	conds := []string{"alone", "harvest", "raw_exec", "bare"}
	waits := map[string][]runQueueWait{} // condition -> per cycle
	samples := map[string][][]float64{}  // condition -> block -> latencies
	for c := range conds {
		samples[conds[c]] = make([][]float64, blocks)
	}
	perCycle := map[string][][2]float64{} // condition -> per cycle: p50 and p99 over the same cycle's alone
	busyCPU := map[string]float64{}       // condition -> CPU-seconds its busy tasks got in its windows
	busyTime := map[string]float64{}      // condition -> seconds of its windows
	for cyc := range cycles {
		line := map[string]float64{}
		for i := range conds {
			cond := conds[(i+cyc)%len(conds)]
			cpu0, began := cpuSeconds(t, pids[cond]...), time.Now()
			if cond != "alone" {
				signal(cond, syscall.SIGCONT)
			}
			onCPU0, wait0 := proc.Schedstat(standInPID)
			lat, failed := standin.Latencies(addr, rate, window)
			onCPU1, wait1 := proc.Schedstat(standInPID)
			if cond != "alone" {
				signal(cond, syscall.SIGSTOP)
			}
			waits[cond] = append(waits[cond], runQueueWait{requests: len(lat), onCPU: onCPU1 - onCPU0, waiting: wait1 - wait0})
			busyCPU[cond] += cpuSeconds(t, pids[cond]...) - cpu0
			busyTime[cond] += time.Since(began).Seconds()
			if failed > 0 {
				t.Logf("cycle %d %s: %d requests failed", cyc+1, cond, failed)
			}
			b := cyc * blocks / cycles
			samples[cond][b] = append(samples[cond][b], lat...)
			line[cond] = standin.Quantiles(lat)[1]
			line[cond+" p50"] = standin.Quantiles(lat)[0]
		}
		for _, cond := range conds[1:] {
			perCycle[cond] = append(perCycle[cond], [2]float64{line[cond+" p50"] / line["alone p50"], line[cond] / line["alone"]})
		}
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("cycle %2d p99 ms: alone %6.2f  harvest %6.2f  raw_exec %6.2f  bare %6.2f; wait per request ms: alone %.3f  harvest %.3f  raw_exec %.3f  bare %.3f  (loadavg %s)",
			cyc+1, line["alone"], line["harvest"], line["raw_exec"], line["bare"], waits["alone"][cyc].perRequest(), waits["harvest"][cyc].perRequest(),
			waits["raw_exec"][cyc].perRequest(), waits["bare"][cyc].perRequest(), strings.Fields(string(load))[0])
	}
	signal("bare", syscall.SIGKILL)
	for d := range pids {
		signal(d, syscall.SIGCONT)
	}
	stopH()
	stopR()
	all := func(cond string) []float64 {
		var out []float64
		for _, b := range samples[cond] {
			out = append(out, b...)
		}
		return out
	}
	t.Logf("steady state, %d cycles of %s windows (%d requests per condition):", cycles, window, len(all("alone")))
	for _, cond := range conds {
		t.Logf("  %-9s p50/p99/p999 %s ms", cond, fmtQ(standin.Quantiles(all(cond))))
	}
	ratios := func(base, of func(int) [3]float64, n int) string {
		var cells []string
		for k, name := range []string{"p50", "p99", "p999"} {
			var xs []string
			var vals []float64
			for b := range n {
				x := of(b)[k] / base(b)[k]
				vals, xs = append(vals, x), append(xs, fmt.Sprintf("%.2f", x))
			}
			cells = append(cells, fmt.Sprintf("%s %.3f [%s]", name, standin.Median(vals), strings.Join(xs, " ")))
		}
		return strings.Join(cells, "  ")
	}
	// Where the scheduler decides it: the stand-in's run-queue wait per
	// request beside each kind of busy loop, less the same cycle's alone,
	// over its CPU per request (cycles interleave the conditions, so each
	// difference is paired against the same background).
	t.Logf("run-queue wait per request, %d cycles: alone %.3f ms, CPU per request %.3f ms", cycles, meanOf(waits["alone"], runQueueWait.perRequest),
		meanOf(waits["alone"], runQueueWait.cpuPerRequest))
	added := map[string]ci{}
	for _, cond := range conds[1:] {
		var xs []float64
		for cyc := range cycles {
			xs = append(xs, (waits[cond][cyc].perRequest()-waits["alone"][cyc].perRequest())/waits[cond][cyc].cpuPerRequest())
		}
		added[cond] = meanCI95(xs)
		t.Logf("  %-9s added wait / CPU per request: %s (wait %.3f ms a request)", cond, added[cond], meanOf(waits[cond], runQueueWait.perRequest))
	}
	var diff []float64
	for cyc := range cycles {
		diff = append(diff, (waits["harvest"][cyc].perRequest()-waits["raw_exec"][cyc].perRequest())/waits["harvest"][cyc].cpuPerRequest())
	}
	t.Logf("  harvest - raw_exec, wait / CPU per request: %s", meanCI95(diff))

	var harvestP99 []float64
	for _, cond := range conds[1:] {
		var p50s, p99s []float64
		for _, r := range perCycle[cond] {
			p50s, p99s = append(p50s, r[0]), append(p99s, r[1])
		}
		t.Logf("  %-9s / alone in the same cycle, median of %d cycles: p50 %.3f  p99 %.3f; its busy tasks got %.2f cores", cond, cycles,
			standin.Median(p50s), standin.Median(p99s), busyCPU[cond]/busyTime[cond])
		if cond == "harvest" {
			harvestP99 = p99s
		}
		pooled := standin.Quantiles(all(cond))
		alone := standin.Quantiles(all("alone"))
		t.Logf("  %-9s / alone, all requests: p50 %.3f  p99 %.3f  p999 %.3f", cond, pooled[0]/alone[0], pooled[1]/alone[1], pooled[2]/alone[2])
		q := func(c string) func(int) [3]float64 {
			return func(b int) [3]float64 { return standin.Quantiles(samples[c][b]) }
		}
		t.Logf("  %-9s / alone, median of %d blocks [each]: %s", cond, blocks, ratios(q("alone"), q(cond), blocks))
	}

	spike := map[string][][3]float64{}
	for r := range rounds {
		order := []string{"spike alone", "spike+harvest"}
		if r%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, cond := range order {
			var stopJob func()
			if cond == "spike+harvest" {
				_, stopJob = busyJob(t, node, "harvest", 2, 0.1)
			}
			// at the stand-in's own nice: the spike is the primary's, not a
			// higher-priority process starving the stand-in
			stopBurn := startBurnerAt(t, node, 0.9, envOr("HARVEST_MEASURE_NICE", "0"))
			lat, _ := standin.Latencies(addr, rate, period)
			stopBurn()
			if stopJob != nil {
				stopJob()
			}
			spike[cond] = append(spike[cond], standin.Quantiles(lat))
			t.Logf("spike round %d %-13s p50/p99/p999 %s ms", r+1, cond, fmtQ(spike[cond][len(spike[cond])-1]))
		}
	}
	t.Logf("  spike+harvest / spike alone, median of %d rounds [each]: %s", rounds,
		ratios(func(r int) [3]float64 { return spike["spike alone"][r] }, func(r int) [3]float64 { return spike["spike+harvest"][r] }, rounds))
	if m := standin.Median(harvestP99); m > 1.05 {
		t.Errorf("primary p99 beside harvested tasks is %.3f x alone (median over %d cycles), goal <= 1.05", m, cycles)
	}
	if h := added["harvest"]; h.hi > 0.05 {
		t.Errorf("the primary's added run-queue wait beside harvested tasks is %s of its CPU per request, goal <= 0.05", h)
	}
}

// runQueueWait is the stand-in's scheduler accounting over one window.
type runQueueWait struct {
	requests       int
	onCPU, waiting time.Duration
}

func (w runQueueWait) perRequest() float64 {
	return w.waiting.Seconds() * 1e3 / float64(max(1, w.requests))
}
func (w runQueueWait) cpuPerRequest() float64 {
	return w.onCPU.Seconds() * 1e3 / float64(max(1, w.requests))
}

func meanOf(ws []runQueueWait, f func(runQueueWait) float64) float64 {
	sum := 0.0
	for _, w := range ws {
		sum += f(w)
	}
	return sum / float64(max(1, len(ws)))
}

// ci is a mean with its 95% interval.
type ci struct{ mean, lo, hi float64 }

func (c ci) String() string { return fmt.Sprintf("%.3f [%.3f, %.3f]", c.mean, c.lo, c.hi) }

// meanCI95 is the mean of xs with Student's t 95% interval.
func meanCI95(xs []float64) ci {
	mean, sd := stat.MeanStdDev(xs, nil)
	if len(xs) < 2 {
		return ci{mean, mean, mean}
	}
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975) * sd / math.Sqrt(float64(len(xs)))
	return ci{mean, mean - half, mean + half}
}

// bareLoops starts n busy loops at nice 0 in the root cgroup, stopped
// (SIGSTOP) until their window; they are killed at cleanup.
func bareLoops(t *testing.T, n int) []int {
	t.Helper()
	var pids []int
	for range n {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP)
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	return pids
}

// allocPIDs are the processes of allocations' tasks (cgroup v1: their
// freezer cgroups).
func allocPIDs(t *testing.T, allocs []*nomadapi.AllocationListStub) []int {
	t.Helper()
	var pids []int
	for _, a := range allocs {
		for _, f := range strings.Fields(readTrim(filepath.Join("/sys/fs/cgroup/freezer/nomad", a.ID+".work", "cgroup.procs"))) {
			pid, _ := strconv.Atoi(f)
			pids = append(pids, pid)
		}
	}
	if len(pids) < len(allocs) {
		t.Fatalf("task processes %v of %d allocations", pids, len(allocs))
	}
	return pids
}

// TestMeasureHarvestedThroughput: with client-2's primary tenant idle, two
// busy tasks under the harvest driver and the same two under raw_exec, a
// minute each, twice in turn: the CPU-seconds per minute their processes
// got. Every other process on the machine counts as primary to the
// harvested tasks (they run at the lowest weight, SCHED_IDLE; with the
// primary at no core the driver lends them the reserve: every CPU), so the
// machine's load is logged beside each minute.
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
			pids := allocPIDs(t, allocs)
			before, began := cpuSeconds(t, pids...), time.Now()
			load0, _ := os.ReadFile("/proc/loadavg")
			time.Sleep(minute)
			used := (cpuSeconds(t, pids...) - before) * time.Minute.Seconds() / time.Since(began).Seconds()
			if driver == "harvest" {
				if v := series(t, clientNamed(t, node).DriverMetrics, "harvest_driver_cpu_reserve_lent", nil); v != 1 {
					t.Errorf("round %d: the primary idle, harvest_driver_cpu_reserve_lent = %v, want 1", round+1, v)
				}
			}
			stop()
			perMinute[driver] = append(perMinute[driver], used)
			t.Logf("round %d %-8s %.1f CPU-seconds per minute (%.2f cores) (loadavg before %s)", round+1, driver, used,
				used/60, strings.Join(strings.Fields(string(load0))[:3], " "))
		}
	}
	h, r := standin.Median(perMinute["harvest"]), standin.Median(perMinute["raw_exec"])
	t.Logf("harvested CPU-seconds per minute with the primary idle: harvest %.1f, raw_exec %.1f: ratio %.2f", h, r, h/r)
}
