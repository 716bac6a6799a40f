//go:build acceptance

package acceptance

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/observability/metricset"
)

// The primary tenant comes first (issue 18): harvested tasks run
// unprivileged, in a parent cgroup of the lowest CPU weight whose CPU cap
// the guard moves every tick, are suppressed before they are evicted, and
// a driver that cannot measure its primary tenant fails safe.

func clientNamed(t *testing.T, name string) localcluster.NomadClient {
	t.Helper()
	for _, c := range cluster.NomadClients {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no client %s", name)
	return localcluster.NomadClient{}
}

func pinTo(node string) string {
	return fmt.Sprintf("constraint {\n    attribute = \"${node.unique.name}\"\n    value     = %q\n  }", node)
}

// harvestCPUDir is a node's harvest cgroup in the cpu hierarchy (cgroup v1)
// or the unified tree (v2).
func harvestCPUDir(c localcluster.NomadClient) string {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return filepath.Join("/sys/fs/cgroup", c.HarvestCgroup)
	}
	return filepath.Join("/sys/fs/cgroup/cpu", c.HarvestCgroup)
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// capOf is the cap the kernel enforces on a node's harvest cgroup, in
// cores: its CFS quota (per 100 ms period) where it has one, else the CPUs
// its cpuset allows when fewer than the machine's, else -1 (uncapped); on
// v1 or v2.
func capOf(c localcluster.NomadClient) float64 {
	dir := harvestCPUDir(c)
	q := readTrim(filepath.Join(dir, "cpu.cfs_quota_us"))
	if q == "" {
		q, _, _ = strings.Cut(readTrim(filepath.Join(dir, "cpu.max")), " ")
	}
	if us, err := strconv.Atoi(q); err == nil && us > 0 {
		return float64(us) / 100000
	}
	cpuset := filepath.Join("/sys/fs/cgroup/cpuset", c.HarvestCgroup, "cpuset.cpus")
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		cpuset = filepath.Join(dir, "cpuset.cpus")
	}
	if cpus, err := harvestcg.ParseCPUList(readTrim(cpuset)); err == nil && len(cpus) > 0 && len(cpus) < runtime.NumCPU() {
		return float64(len(cpus))
	}
	return -1
}

// cpusAllowed is the CPU list a process may run on.
func cpusAllowed(t *testing.T, pid string) string {
	t.Helper()
	for _, line := range strings.Split(readTrim("/proc/"+pid+"/status"), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list for process %s", pid)
	return ""
}

// lentCap is what capOf reads while the primary is idle and the driver
// lends it the reserve (lend_idle_reserve): the cap is the capacity, which
// on the local cluster is every CPU of the machine, so the cpuset is whole.
const lentCap = -1

// waitCap polls the cap in force every 2 ms until it is want cores, and
// returns when.
func waitCap(t *testing.T, c localcluster.NomadClient, want float64, timeout time.Duration) time.Time {
	t.Helper()
	var got float64
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if got = capOf(c); math.Abs(got-want) < 0.005 {
			return time.Now()
		}
	}
	t.Fatalf("%s: cap %.2f cores after %s, want %.2f", c.Name, got, timeout, want)
	return time.Time{}
}

// series reads the sum of a metric's series whose labels include labels
// from a driver's /metrics.
func series(t *testing.T, addr, name string, labels map[string]string) float64 {
	t.Helper()
	fams := scrape(t, addr)
	if _, ok := fams[name]; !ok {
		t.Fatalf("%s serves no %s", addr, name)
	}
	sum, _ := fams.Sum(name, labels)
	return sum
}

// scrape reads a daemon's /metrics.
func scrape(t *testing.T, addr string) metricset.Families {
	t.Helper()
	fams, err := metricset.Scrape("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// driverEvent finds the first task event of a whose message starts with
// prefix.
func driverEvent(a *nomadapi.Allocation, prefix string) (string, time.Time, bool) {
	for _, st := range a.TaskStates {
		for _, ev := range st.Events {
			for _, m := range []string{ev.DisplayMessage, ev.Message, ev.DriverMessage} {
				if strings.HasPrefix(m, prefix) {
					return m, time.Unix(0, ev.Time), true
				}
			}
		}
	}
	return "", time.Time{}, false
}

// waitEvent waits until an allocation of job has an event starting with
// prefix, and returns it.
func waitEvent(t *testing.T, job, prefix string, timeout time.Duration) (*nomadapi.Allocation, string, time.Time) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, a := range allocations(t, job) {
			if m, at, ok := driverEvent(a, prefix); ok {
				return a, m, at
			}
		}
	}
	t.Fatalf("job %s: no %q event within %s", job, prefix, timeout)
	return nil, "", time.Time{}
}

// driverHealthy waits until node's harvest driver health, as the server
// has it, is want, and returns when.
func driverHealthy(t *testing.T, node string, want bool, timeout time.Duration) time.Time {
	t.Helper()
	var desc string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		n, _, err := nomadClient(t).Nodes().Info(nodeID(t, node), nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := n.Drivers["harvest"]; d != nil {
			if desc = d.HealthDescription; d.Healthy == want {
				return time.Now()
			}
		}
	}
	t.Fatalf("%s: harvest driver healthy != %v after %s (%q)", node, want, timeout, desc)
	return time.Time{}
}

func busyLoop() (string, []string) { return "/bin/sh", []string{"-c", "while :; do :; done"} }

// TestHarvestedTasksRunUnprivileged: a harvested task with no user runs as
// nobody and cannot read the environment of another (root) process on its
// server; a task asking for root is refused.
func TestHarvestedTasksRunUnprivileged(t *testing.T) {
	const node = "client-3"
	secret := exec.Command("/bin/sleep", "300")
	secret.Env = []string{"HARVEST_ACCEPTANCE_SECRET=s3cr3t-value"}
	secret.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := secret.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secret.Process.Kill(); _ = secret.Wait() })

	job := uniqueName("acc-nobody")
	purgeJob(t, job)
	script := fmt.Sprintf("id -u; id -g; if cat /proc/%d/environ; then echo READ; else echo DENIED; fi", secret.Process.Pid)
	nomadCLI(t, "job", "run", "-detach", harvestJobSpec{ID: job, Count: 1, CPU: mhzFor(t, node, 0.1), Memory: 32,
		Command: "/bin/sh", Args: []string{"-c", script}, Extra: pinTo(node)}.file(t))
	allocs := waitAllocs(t, job, 1, 2*time.Minute, complete)
	out := nomadCLI(t, "alloc", "logs", allocs[0].ID)
	errOut := nomadCLI(t, "alloc", "logs", "-stderr", allocs[0].ID)
	lines := strings.Fields(out)
	if len(lines) != 3 || lines[0] != "65534" || lines[2] != "DENIED" || strings.Contains(out, "s3cr3t") {
		t.Fatalf("task output %q (stderr %q): want uid 65534 and DENIED", out, errOut)
	}
	t.Logf("task with no user: uid %s gid %s; reading pid %d's environ: %s", lines[0], lines[1], secret.Process.Pid, strings.TrimSpace(errOut))

	rootJob := uniqueName("acc-root")
	purgeJob(t, rootJob)
	nomadCLI(t, "job", "run", "-detach", harvestJobSpec{ID: rootJob, Count: 1, CPU: mhzFor(t, node, 0.1), Memory: 32,
		Command: "/bin/true", User: "root", Extra: pinTo(node)}.file(t))
	var msg string
	for deadline := time.Now().Add(time.Minute); !strings.Contains(msg, "allow_root is false") && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		msg = ""
		for _, a := range allocations(t, rootJob) {
			for _, st := range a.TaskStates {
				for _, ev := range st.Events {
					msg += ev.DisplayMessage + " " + ev.DriverError + "\n"
				}
			}
		}
	}
	if !strings.Contains(msg, "allow_root is false") {
		t.Fatalf("root task: events %q, want a refusal (allow_root is false)", msg)
	}
	if v := series(t, clientNamed(t, node).DriverMetrics, "harvest_driver_admissions_refused_total", map[string]string{"reason": "user"}); v < 1 {
		t.Fatalf("admissions_refused_total{reason=user} = %v", v)
	}
	t.Logf("task with user = \"root\" refused")
}

// TestDriverCapsHarvestedCPUAndSuppressesBeforeEviction: a busy harvested
// task runs as nobody in the node's harvest cgroup (lowest weight); the
// cap follows capacity - rounded primary - reserve, as whole CPUs of the
// cgroup's cpuset (one CPU below that, and the least CFS quota at 0): a
// spike the cap absorbs leaves the task running, on one CPU; a
// spike that leaves it less than its allocation suppresses it (a task
// event) and evicts it after the grace.
func TestDriverCapsHarvestedCPUAndSuppressesBeforeEviction(t *testing.T) {
	const node = "client-4"
	c := clientNamed(t, node)
	dir := harvestCPUDir(c)
	if w := readTrim(filepath.Join(dir, "cpu.shares")) + readTrim(filepath.Join(dir, "cpu.weight")); w != "3" && w != "2" && w != "1" {
		t.Fatalf("%s: weight %s, want the lowest", dir, w)
	}
	job := uniqueName("acc-busy")
	purgeJob(t, job)
	cmd, args := busyLoop()
	nomadCLI(t, "job", "run", "-detach", harvestJobSpec{ID: job, Count: 1, CPU: mhzFor(t, node, 0.25), Memory: 32,
		Command: cmd, Args: args, Extra: pinTo(node)}.file(t))
	alloc := waitAllocs(t, job, 1, time.Minute, func(a *nomadapi.AllocationListStub) bool { return a.ClientStatus == "running" })[0]
	taskCg := filepath.Join(dir, alloc.ID+".work")
	var pids []string
	for deadline := time.Now().Add(10 * time.Second); len(pids) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		pids = strings.Fields(readTrim(filepath.Join(taskCg, "cgroup.procs")))
	}
	if len(pids) == 0 {
		t.Fatalf("no process in %s", taskCg)
	}
	if status := readTrim("/proc/" + pids[0] + "/status"); !strings.Contains(status, "\nUid:\t65534\t") {
		t.Fatalf("task process %s does not run as nobody:\n%s", pids[0], status)
	}
	// the primary idle (no core): the reserve is lent, every CPU
	waitCap(t, c, lentCap, 30*time.Second)
	if v := series(t, c.DriverMetrics, "harvest_driver_cpu_reserve_lent", nil); v != 1 {
		t.Fatalf("the primary idle, harvest_driver_cpu_reserve_lent = %v, want 1", v)
	}

	// absorbed: a 0.6-core spike (rounded 1) caps the task at 0.5 cores,
	// above its 0.25: it keeps running, on one CPU at the lowest weight
	stop1 := startBurner(t, node, 0.6)
	spike := time.Now()
	var planned float64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if planned = series(t, c.DriverMetrics, "harvest_driver_cpu_cap_cores", nil); math.Abs(planned-0.5) < 0.005 {
			break
		}
	}
	if math.Abs(planned-0.5) >= 0.005 {
		t.Fatalf("cap %.2f cores after the spike, want 0.5", planned)
	}
	t.Logf("spike to the 0.5-core cap: %.0f ms; in force: %.2f cores", time.Since(spike).Seconds()*1000, capOf(c))
	if allowed, _ := harvestcg.ParseCPUList(cpusAllowed(t, pids[0])); len(allowed) != 1 {
		t.Fatalf("capped below one CPU, the task may run on CPUs %v", allowed)
	}
	cpu0, at0 := series(t, c.DriverMetrics, "harvest_driver_harvested_cpu_seconds_total", nil), time.Now()
	time.Sleep(3 * time.Second)
	rate := (series(t, c.DriverMetrics, "harvest_driver_harvested_cpu_seconds_total", nil) - cpu0) / time.Since(at0).Seconds()
	// how much it gets on its CPU depends on what else runs on the machine
	// (it yields to every other process): only where it may run is checked
	t.Logf("capped at 0.5 cores: the busy task used %.2f cores, on CPU %s", rate, cpusAllowed(t, pids[0]))
	for _, a := range allocations(t, job) {
		if _, _, ok := driverEvent(a, "evicted:"); ok || a.ClientStatus != "running" {
			t.Fatalf("a spike the cap absorbs stopped the task: %s", a.ClientStatus)
		}
	}

	// squeezed: another 0.9 core (rounded 2) leaves a cap of 0 < 0.25: the
	// task is told it is suppressed, and evicted after the 500 ms grace
	stop2 := startBurner(t, node, 0.9)
	squeeze := time.Now()
	a, msg, evictedAt := waitEvent(t, job, "evicted:", 30*time.Second)
	stop1()
	stop2()
	smsg, suppressedAt, ok := driverEvent(a, "suppressed:")
	if !ok || !strings.Contains(msg, "for longer than the 500ms grace") {
		t.Fatalf("eviction %q without a suppression before it (%q)", msg, smsg)
	}
	if gap := evictedAt.Sub(suppressedAt); gap < 450*time.Millisecond {
		t.Fatalf("evicted %s after the suppression, within the 500ms grace", gap)
	}
	t.Logf("squeeze to suppression %.0f ms, to eviction %.0f ms: %q then %q", suppressedAt.Sub(squeeze).Seconds()*1000,
		evictedAt.Sub(squeeze).Seconds()*1000, smsg, msg)
	for name, reason := range map[string]string{"harvest_driver_suppressions_total": "cpu", "harvest_driver_evictions_total": "cpu"} {
		if v := series(t, c.DriverMetrics, name, map[string]string{"reason": reason}); v < 1 {
			t.Errorf("%s{reason=%s} = %v", name, reason, v)
		}
	}
}

// TestDriverFailsSafeWhenThePrimaryIsUnmeasured: with the usage plugin
// killed and the primary cgroup gone (the plugin's exporter and the
// built-in cgroup source both read it), the driver evicts its harvested
// task once stale_after (3 s) has passed without a good sample, its
// fingerprint turns unhealthy; when the cgroup is back it is healthy again
// and runs harvested work.
func TestDriverFailsSafeWhenThePrimaryIsUnmeasured(t *testing.T) {
	const node = "client-5"
	c := clientNamed(t, node)
	job := uniqueName("acc-stale")
	purgeJob(t, job)
	nomadCLI(t, "job", "run", "-detach", harvestJob(t, job, 1, mhzFor(t, node, 0.25), 600, pinTo(node)))
	waitAllocs(t, job, 1, time.Minute, func(a *nomadapi.AllocationListStub) bool { return a.ClientStatus == "running" })
	driverHealthy(t, node, true, time.Minute)

	var dirs []string
	for _, ctrl := range []string{"cpuacct", "memory", ""} {
		if d := filepath.Join("/sys/fs/cgroup", ctrl, c.PrimaryCgroup); readTrim(filepath.Join(d, "cgroup.procs")) == "" {
			if _, err := os.Stat(d); err == nil {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("no primary cgroup of %s", node)
	}
	restore := func() {
		for _, d := range dirs {
			if _, err := os.Stat(d + ".away"); err == nil {
				if err := os.Rename(d+".away", d); err != nil {
					t.Errorf("restore %s: %v", d, err)
				}
			}
		}
	}
	t.Cleanup(restore)
	broke := time.Now()
	for _, d := range dirs {
		if err := os.Rename(d, d+".away"); err != nil {
			t.Fatal(err)
		}
	}
	for _, pid := range usagePluginPIDs(t) {
		if processInTree(pid, c.PID) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_, msg, stoppedAt := waitEvent(t, job, "evicted: the primary tenant has not been measured", time.Minute)
	unhealthyAt := driverHealthy(t, node, false, time.Minute)
	if v := series(t, c.DriverMetrics, "harvest_driver_fail_safe", nil); v != 1 {
		t.Fatalf("fail_safe = %v", v)
	}
	t.Logf("sources broken: evicted after %.2f s (stale_after 3s): %q; fingerprint unhealthy at the server after %.2f s",
		stoppedAt.Sub(broke).Seconds(), msg, unhealthyAt.Sub(broke).Seconds())

	restore()
	restored := time.Now()
	healthyAt := driverHealthy(t, node, true, time.Minute)
	job2 := uniqueName("acc-resumed")
	purgeJob(t, job2)
	nomadCLI(t, "job", "run", "-detach", harvestJob(t, job2, 1, mhzFor(t, node, 0.25), 600, pinTo(node)))
	waitAllocs(t, job2, 1, 2*time.Minute, func(a *nomadapi.AllocationListStub) bool { return a.ClientStatus == "running" })
	if v := series(t, c.DriverMetrics, "harvest_driver_fail_safe", nil); v != 0 {
		t.Fatalf("fail_safe = %v after recovery", v)
	}
	t.Logf("sources back: healthy at the server after %.2f s, a harvested task running again after %.2f s",
		healthyAt.Sub(restored).Seconds(), time.Since(restored).Seconds())
}
