package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client/lib/cgroupslib"
	"github.com/hashicorp/nomad/client/lib/numalib"
	"github.com/hashicorp/nomad/helper/uuid"
	nstructs "github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/drivers"
	dtestutil "github.com/hashicorp/nomad/plugins/drivers/testutils"

	"github.com/harvest-platform/harvest/driver/guard"
)

// fakeSource is a usage source the test sets by hand.
type fakeSource struct {
	mu       sync.Mutex
	capacity guard.Resources
	primary  guard.Resources
}

func (f *fakeSource) Name() string              { return "fake" }
func (f *fakeSource) Capacity() guard.Resources { return f.capacity }
func (f *fakeSource) Primary(guard.Resources) (guard.Resources, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.primary, nil
}
func (f *fakeSource) set(r guard.Resources) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.primary = r
}

var topology = numalib.Scan(numalib.PlatformScanners(false))

// newHarness runs the driver behind Nomad's driver harness (gRPC), with a
// fake usage source of 4 cores and 4 GiB, a 1-core reserve and no margin,
// and no spike check (its peeks would read this host).
func newHarness(t *testing.T) (*dtestutil.DriverHarness, *Driver, *fakeSource) {
	t.Helper()
	d := New(hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Warn}))
	cfg := Config{Enabled: true, ReserveCPU: "1", ReserveMemory: "0", GuardInterval: "1h", SpikeCheck: "0", AdmitWindow: "0s", UsageSource: "proc",
		EvictGrace: "0s", StaleAfter: "3h", HarvestCgroup: "none"}
	h := newHarnessWith(t, d, cfg)
	fake := &fakeSource{capacity: guard.Resources{CPU: 4, MemoryMiB: 4096}}
	s, err := parseSettings(cfg, fake.capacity)
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	// the loop's first pass may have measured the real host: start clean
	d.source, d.settings, d.primary, d.tracker = fake, s, guard.Resources{}, guard.NewTracker(s.hysteresis.AdmitWindow)
	d.guard, d.lastGood = &guard.Guard{Policy: s.policy}, time.Now()
	d.mu.Unlock()
	return h, d, fake
}

// task builds a task of one core (in CPU shares) running command.
func task(t *testing.T, h *dtestutil.DriverHarness, d *Driver, name string, command ...string) *drivers.TaskConfig {
	t.Helper()
	allocID := uuid.Generate()
	mhzPerCore := int64(d.compute.TotalCompute) / int64(d.compute.NumCores)
	cfg := &drivers.TaskConfig{
		ID: uuid.Generate(), AllocID: allocID, Name: name,
		Resources: &drivers.Resources{
			NomadResources: &nstructs.AllocatedTaskResources{
				Memory: nstructs.AllocatedMemoryResources{MemoryMB: 64},
				Cpu:    nstructs.AllocatedCpuResources{CpuShares: mhzPerCore},
			},
			LinuxResources: &drivers.LinuxResources{MemoryLimitBytes: 64 << 20, CPUShares: mhzPerCore,
				CpusetCgroupPath: cgroupslib.LinuxResourcesPath(allocID, name, false)},
		},
	}
	if err := cfg.EncodeConcreteDriverConfig(&TaskConfig{Command: command[0], Args: command[1:]}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.MkAllocDir(cfg, true))
	traversable(t, cfg.TaskDir().Dir)
	return cfg
}

// traversable lets every user pass through dir's parents up to the temp
// dir, as a Nomad client's data_dir must be for tasks running as nobody
// (the driver's default user).
func traversable(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, st.Mode().Perm()|0o011); err != nil {
			t.Fatal(err)
		}
	}
}

func start(t *testing.T, h *dtestutil.DriverHarness, cfg *drivers.TaskConfig) {
	t.Helper()
	if _, _, err := h.StartTask(cfg); err != nil {
		t.Fatalf("start %s: %v", cfg.Name, err)
	}
	t.Cleanup(func() {
		_ = h.StopTask(cfg.ID, time.Second, "SIGKILL")
		_ = h.DestroyTask(cfg.ID, true)
	})
}

func wait(t *testing.T, h *dtestutil.DriverHarness, id string) *drivers.ExitResult {
	t.Helper()
	ch, err := h.WaitTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-ch:
		return res
	case <-time.After(20 * time.Second):
		t.Fatalf("task %s did not exit", id)
		return nil
	}
}

func TestTaskRunsWritesLogsAndExits(t *testing.T) {
	h, d, _ := newHarness(t)
	cfg := task(t, h, d, "hello", "/bin/sh", "-c", "echo hello from harvest; exit 3")
	start(t, h, cfg)
	res := wait(t, h, cfg.ID)
	if res.ExitCode != 3 || res.Err != nil {
		t.Fatalf("exit %+v, want code 3", res)
	}
	var out []byte
	var err error
	for i := 0; i < 50 && !strings.Contains(string(out), "hello from harvest"); i++ { // logmon writes asynchronously
		time.Sleep(100 * time.Millisecond)
		out, err = os.ReadFile(filepath.Join(cfg.TaskDir().LogDir, "hello.stdout.0"))
	}
	if err != nil || !strings.Contains(string(out), "hello from harvest") {
		t.Fatalf("stdout log %q (%v)", out, err)
	}
}

func TestStopUsesTheKillSignal(t *testing.T) {
	h, d, _ := newHarness(t)
	cfg := task(t, h, d, "trap", "/bin/sh", "-c", "trap 'echo got-term; exit 7' TERM; while true; do sleep 0.1; done")
	start(t, h, cfg)
	if err := h.WaitUntilStarted(cfg.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let the shell install its trap
	if err := h.StopTask(cfg.ID, 5*time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	if res := wait(t, h, cfg.ID); res.ExitCode != 7 {
		t.Fatalf("exit %+v, want 7 from the TERM trap", res)
	}
}

func TestEvictionIsYoungestFirstMinimalAndSaysWhy(t *testing.T) {
	h, d, fake := newHarness(t)
	events, err := h.TaskEvents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*drivers.TaskConfig
	for _, name := range []string{"oldest", "middle", "youngest"} {
		cfg := task(t, h, d, name, "/bin/sleep", "300")
		start(t, h, cfg)
		tasks = append(tasks, cfg)
		time.Sleep(20 * time.Millisecond)
	}
	// 4 cores - primary 1 (0.5 rounded up) - 3 tasks = 0 free < 1 reserved: one task must go
	fake.set(guard.Resources{CPU: 0.5})
	dec := d.guardOnce(time.Now())
	if len(dec.Evict) != 1 || dec.Evict[0].Name != "youngest" {
		t.Fatalf("evicted %+v, want the youngest only", dec.Evict)
	}
	res := wait(t, h, tasks[2].ID)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "evicted: primary tenant needs 1 cores") {
		t.Fatalf("exit result %+v does not say it was evicted", res)
	}
	// with no grace, every task is told it is suppressed, then the youngest is evicted
	suppressed := map[string]bool{}
	for ev := range nextEvents(t, events, 4) {
		switch {
		case strings.HasPrefix(ev.Message, "suppressed: primary tenant needs 1 cores; harvested tasks capped at 2.00 cores, below the 3.00"):
			suppressed[ev.TaskName] = true
		case ev.TaskName != "youngest" || !strings.HasPrefix(ev.Message, "evicted:") || ev.Annotations["harvest.evicted"] != "true" ||
			ev.Annotations["harvest.reason"] != "cpu":
			t.Fatalf("event %+v", ev)
		default: // what harvestctl explain alloc reads
			a := ev.Annotations
			if a["harvest.victim_rank"] != "1/1" || !strings.HasPrefix(a["harvest.victims"], "youngest@") || a["harvest.primary_cores"] != "0.50" ||
				a["harvest.primary_rounded_cores"] != "1.00" || a["harvest.capacity_cores"] != "4.00" || a["harvest.cap_cores"] != "2.00" ||
				a["harvest.need_cores"] != "3.00" || a["harvest.task_started"] == "" {
				t.Fatalf("eviction annotations %v", a)
			}
		}
	}
	if len(suppressed) != 3 {
		t.Fatalf("suppression events for %v, want all three tasks", suppressed)
	}
	for _, cfg := range tasks[:2] {
		st, err := h.InspectTask(cfg.ID)
		if err != nil || st.State != drivers.TaskStateRunning {
			t.Fatalf("%s not running after the eviction: %+v %v", cfg.Name, st, err)
		}
	}
	// the reserve is whole again: another pass evicts nothing
	if dec := d.guardOnce(time.Now()); len(dec.Evict) != 0 {
		t.Fatalf("second pass evicted %+v", dec.Evict)
	}

	// admission: 4 - 1 - 2 = 1 free; one more core would leave 0 < 1
	extra := task(t, h, d, "extra", "/bin/sleep", "300")
	_, _, err = h.StartTask(extra)
	if err == nil || !nstructs.IsRecoverable(err) || !strings.Contains(err.Error(), "below the primary tenant's reserve") {
		t.Fatalf("start over the reserve: %v (recoverable %v)", err, nstructs.IsRecoverable(err))
	}
	fake.set(guard.Resources{})
	d.guardOnce(time.Now())
	start(t, h, extra) // with the primary idle there is room again
}

// nextEvents yields the next n task events, failing the test when one takes
// over 5 s.
func nextEvents(t *testing.T, events <-chan *drivers.TaskEvent, n int) func(func(*drivers.TaskEvent) bool) {
	return func(yield func(*drivers.TaskEvent) bool) {
		for range n {
			select {
			case ev := <-events:
				if !yield(ev) {
					return
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("fewer than %d task events", n)
			}
		}
	}
}

func TestRecoverTaskAfterDriverRestart(t *testing.T) {
	h, d, _ := newHarness(t)
	cfg := task(t, h, d, "long", "/bin/sleep", "300")
	handle, _, err := h.StartTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.DestroyTask(cfg.ID, true) })
	// TaskStats reports the task's usage from its cgroup
	if err := h.WaitUntilStarted(cfg.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stats, err := h.TaskStats(ctx, cfg.ID, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-stats:
		if u == nil || u.ResourceUsage == nil || u.ResourceUsage.MemoryStats == nil || u.ResourceUsage.CpuStats == nil {
			t.Fatalf("task stats %+v", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no task stats")
	}
	cancel()
	// exec runs a command beside the task (nomad alloc exec)
	res, err := h.ExecTask(cfg.ID, []string{"/bin/echo", "inside"}, 10*time.Second)
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "inside" || res.ExitResult.ExitCode != 0 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	// a new driver instance (the client restarted) recovers the task from its handle
	d2 := New(hclog.NewNullLogger())
	d2.mu.Lock()
	d2.compute, d2.settings = d.compute, d.settings
	d2.tracker = guard.NewTracker(0)
	d2.mu.Unlock()
	if err := d2.RecoverTask(handle); err != nil {
		t.Fatal(err)
	}
	st, err := d2.InspectTask(cfg.ID)
	if err != nil || st.State != drivers.TaskStateRunning || st.DriverAttributes["pid"] == "" {
		t.Fatalf("recovered task %+v %v", st, err)
	}
	if err := d2.StopTask(cfg.ID, time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	d2.Shutdown()
}

// TestMain prepares the /nomad cgroups a Nomad client would (the executor
// places tasks under them) before any test runs.
func TestMain(m *testing.M) {
	if err := cgroupslib.Init(hclog.NewNullLogger(), topology.UsableCores().String()); err != nil {
		fmt.Fprintln(os.Stderr, "driver tests: cannot initialise Nomad's cgroups (run as root):", err)
		os.Exit(1)
	}
	code := m.Run()
	if pluginBuildDir != "" {
		os.RemoveAll(pluginBuildDir)
	}
	// Nomad's executors outlive their client by design (a restarted client
	// re-attaches to them), so one a test's cleanup missed would run on with
	// its task: kill every process this test binary started, and their
	// children, before it exits.
	if n := killDescendants(os.Getpid()); n > 0 {
		fmt.Fprintf(os.Stderr, "driver tests: killed %d executor or task processes left running\n", n)
	}
	os.Exit(code)
}

// killDescendants SIGKILLs every descendant of pid (children first found
// from /proc) and returns how many it killed.
func killDescendants(pid int) int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'
		i := strings.LastIndexByte(string(b), ')')
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		parent, _ := strconv.Atoi(fields[1])
		children[parent] = append(children[parent], child)
	}
	killed := 0
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			walk(c)
			if syscall.Kill(c, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	walk(pid)
	return killed
}
