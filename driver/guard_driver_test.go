package driver

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nstructs "github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	dtestutil "github.com/hashicorp/nomad/plugins/drivers/testutils"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/observability/metricset"
)

// brokenSource fails, or answers NaN, while the test says so.
type brokenSource struct {
	fakeSource
	mu   sync.Mutex
	mode string // "", "error", "nan"
}

func (b *brokenSource) Primary(h guard.Resources) (guard.Resources, error) {
	b.mu.Lock()
	mode := b.mode
	b.mu.Unlock()
	switch mode {
	case "error":
		return guard.Resources{}, errors.New("source down")
	case "nan":
		return guard.Resources{CPU: math.NaN()}, nil
	}
	return b.fakeSource.Primary(h)
}

func (b *brokenSource) setMode(m string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mode = m
}

func gauge(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := metricset.Gather(reg)
	if err != nil {
		t.Fatal(err)
	}
	v, n := fams.Sum(name, labels)
	if n == 0 {
		t.Fatalf("no metric %s%v", name, labels)
	}
	return v
}

// A source that fails or answers NaN keeps the last good measurement until
// stale_after; then the guard fails safe (every task evicted, starts
// refused, fingerprint unhealthy) and comes back by itself with the
// measurements.
func TestFailSafeOnStaleOrNaNAndRecovery(t *testing.T) {
	h, d, fake := newHarness(t)
	src := &brokenSource{fakeSource: fakeSource{capacity: fake.capacity}}
	d.mu.Lock()
	d.source = src
	d.settings.policy.StaleAfter = 3 * time.Second
	d.guard = &guard.Guard{Policy: d.settings.policy}
	d.mu.Unlock()
	t0 := time.Now()
	d.guardOnce(t0) // a good sample at t0
	cfg := task(t, h, d, "harvested", "/bin/sleep", "300")
	start(t, h, cfg)

	for i, mode := range []string{"error", "nan"} {
		src.setMode(mode)
		if p := d.guardOnce(t0.Add(2 * time.Second)); p.Stale || len(p.Evict) != 0 {
			t.Fatalf("%s within the window: %+v", mode, p)
		}
		if fp := d.fingerprint(roomAttr{}); fp.Health != drivers.HealthStateHealthy {
			t.Fatalf("%s within the window: fingerprint %s", mode, fp.HealthDescription)
		}
		p := d.guardOnce(t0.Add(3*time.Second + time.Millisecond))
		if !p.Stale || p.Cap != 0 || (i == 0 && (len(p.Evict) != 1 || p.Evict[0].Reason != guard.ReasonStale)) {
			t.Fatalf("%s past the window: %+v", mode, p)
		}
		if i == 0 {
			res := wait(t, h, cfg.ID)
			if res.Err == nil || !strings.HasPrefix(res.Err.Error(), "evicted: the primary tenant has not been measured for 3.001s") {
				t.Fatalf("exit %+v", res)
			}
		}
		if fp := d.fingerprint(roomAttr{}); fp.Health != drivers.HealthStateUnhealthy || !strings.Contains(fp.HealthDescription, "failing safe") {
			t.Fatalf("%s: fingerprint %s %q", mode, fp.Health, fp.HealthDescription)
		}
		extra := task(t, h, d, "extra", "/bin/sleep", "300")
		if _, _, err := h.StartTask(extra); err == nil || !nstructs.IsRecoverable(err) || !strings.Contains(err.Error(), "admits no harvested task") {
			t.Fatalf("%s: start while failing safe: %v", mode, err)
		}
		if v := gauge(t, d.Metrics(), "harvest_driver_fail_safe", nil); v != 1 {
			t.Fatalf("fail_safe = %v", v)
		}
		// measured again: healthy, and a start is admitted
		src.setMode("")
		t0 = t0.Add(4 * time.Second)
		if p := d.guardOnce(t0); p.Stale {
			t.Fatalf("after recovery: %+v", p)
		}
		if fp := d.fingerprint(roomAttr{}); fp.Health != drivers.HealthStateHealthy {
			t.Fatalf("after recovery: %q", fp.HealthDescription)
		}
		if i == 0 {
			start(t, h, extra)
		}
	}
	m := d.Metrics()
	if v := gauge(t, m, "harvest_driver_evictions_total", map[string]string{"reason": "stale"}); v != 2 {
		t.Errorf("evictions_total{stale} = %v, want 2", v)
	}
	if v := gauge(t, m, "harvest_driver_admissions_refused_total", map[string]string{"reason": "stale"}); v != 2 {
		t.Errorf("admissions_refused_total{stale} = %v, want 2", v)
	}
	if v := gauge(t, m, "harvest_driver_suppressions_total", map[string]string{"reason": "stale"}); v != 2 {
		t.Errorf("suppressions_total{stale} = %v, want 2 fail-safe entries", v)
	}
}

// Tasks with no user run as nobody; root is refused unless allowed; a
// denied uid is refused.
func TestTaskUsers(t *testing.T) {
	h, d, _ := newHarness(t)
	cfg := task(t, h, d, "whoami", "/bin/sh", "-c", "id -u")
	start(t, h, cfg)
	if res := wait(t, h, cfg.ID); res.ExitCode != 0 {
		t.Fatalf("exit %+v", res)
	}
	var out []byte
	for i := 0; i < 50 && len(out) == 0; i++ { // logmon writes asynchronously
		time.Sleep(100 * time.Millisecond)
		out, _ = os.ReadFile(filepath.Join(cfg.TaskDir().LogDir, "whoami.stdout.0"))
	}
	if strings.TrimSpace(string(out)) != "65534" {
		t.Fatalf("task ran as uid %q, want nobody's 65534", out)
	}
	root := task(t, h, d, "root", "/bin/true")
	root.User = "root"
	if _, _, err := h.StartTask(root); err == nil || !strings.Contains(err.Error(), "allow_root is false") {
		t.Fatalf("root task: %v", err)
	}
	if v := gauge(t, d.Metrics(), "harvest_driver_admissions_refused_total", map[string]string{"reason": "user"}); v != 1 {
		t.Fatalf("refused{user} = %v", v)
	}

}

func TestSettingsAreCheckedAtLoad(t *testing.T) {
	capacity := guard.Resources{CPU: 4, MemoryMiB: 4096}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{EvictGrace: "-1s"}, "evict_grace"},
		{Config{EvictGrace: "soon"}, "evict_grace"},
		{Config{ProgressShare: 1.5}, "progress_share"},
		{Config{GuardInterval: "1s", StaleAfter: "1500ms"}, "stale_after"},
		{Config{HarvestCgroup: "harvest"}, "harvest_cgroup"},
		{Config{HarvestCgroup: "/a/../b"}, "harvest_cgroup"},
		{Config{DefaultUser: "root"}, "set allow_root"},
		{Config{DefaultUser: "nosuchuser"}, "default_user"},
		{Config{DeniedHostUIDs: "x-y"}, "denied_host_uids"},
		{Config{DeniedHostUIDs: "65534"}, "default_user \"nobody\" is denied"},
	} {
		if _, err := parseSettings(c.cfg, capacity); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", c.cfg, err, c.want)
		}
	}
	s, err := parseSettings(Config{}, capacity)
	if err != nil {
		t.Fatal(err)
	}
	if s.interval != 200*time.Millisecond || s.policy.Grace != 500*time.Millisecond || s.policy.ProgressShare != 1 ||
		s.policy.StaleAfter != 3*time.Second || s.harvestCgroup != "/harvest" || s.users.DefaultUser() != "nobody" || s.users.AllowRoot() {
		t.Fatalf("defaults %+v", s)
	}
	if s, err := parseSettings(Config{HarvestCgroup: "none"}, capacity); err != nil || s.harvestCgroup != "" {
		t.Fatalf("none: %+v %v", s.harvestCgroup, err)
	}
}

// On this machine's real cgroup v1 hierarchy: a task is moved under the
// driver's harvest cgroup, which has the lowest weight, and the guard moves
// the cgroup's CFS quota with the primary every tick; the task's cgroup is
// gone once the task is destroyed.
func TestHarvestCgroupOnRealV1(t *testing.T) {
	if os.Geteuid() != 0 || harvestcg.Detect(cgroupRoot) != harvestcg.V1 {
		t.Skip("needs root on a cgroup v1 host")
	}
	d := New(hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Warn}))
	h := newHarnessWith(t, d, Config{Enabled: true, ReserveCPU: "1", ReserveMemory: "0", GuardInterval: "1h", SpikeCheck: "0", AdmitWindow: "0s",
		UsageSource: "proc", EvictGrace: "1h", StaleAfter: "3h", CPUIdle: true, CapMethod: "quota", HarvestCgroup: "/harvest-driver-unit-" + strconv.Itoa(os.Getpid())})
	fake := &fakeSource{capacity: guard.Resources{CPU: 4, MemoryMiB: 4096}}
	d.mu.Lock()
	d.source, d.primary, d.settings.capacity = fake, guard.Resources{}, fake.capacity
	// forget what the start-up tick measured of the real host (its memory
	// can exceed the fake capacity on a busy machine and refuse the task)
	d.tracker = guard.NewTracker(0)
	parent := d.cgroup
	d.mu.Unlock()
	t.Cleanup(func() {
		if err := parent.Close(); err != nil {
			t.Errorf("harvest cgroup left: %v", err)
		}
	})
	dir := filepath.Join(cgroupRoot, "cpu", d.settings.harvestCgroup)
	if idle, _ := os.ReadFile(filepath.Join(dir, "cpu.idle")); strings.TrimSpace(string(idle)) != "1" {
		t.Fatalf("cpu.idle %q", idle)
	}
	cfg := task(t, h, d, "busy", "/bin/sh", "-c", "while :; do :; done")
	start(t, h, cfg)
	st, _ := h.InspectTask(cfg.ID)
	pid := st.DriverAttributes["pid"]
	cg, _ := os.ReadFile("/proc/" + pid + "/cgroup")
	if !strings.Contains(string(cg), ":cpu:"+d.settings.harvestCgroup+"/"+cgroupName(cfg)+"\n") {
		t.Fatalf("task cgroups:\n%s", cg)
	}
	quota := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
		return strings.TrimSpace(string(b))
	}
	for _, c := range []struct {
		primary float64
		quota   string
	}{{0, "300000"}, {1.2, "100000"}, {3.5, "1000"}, {0.1, "200000"}} { // 4 - ceil(primary) - 1 reserve
		fake.set(guard.Resources{CPU: c.primary})
		d.guardOnce(time.Now())
		if q := quota(); q != c.quota {
			t.Errorf("primary %.1f: quota %s, want %s", c.primary, q, c.quota)
		}
	}
	if v := gauge(t, d.Metrics(), "harvest_driver_cpu_cap_cores", nil); v != 2 {
		t.Errorf("cpu_cap_cores %v, want 2", v)
	}
	if err := h.StopTask(cfg.ID, time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	if err := h.DestroyTask(cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, cgroupName(cfg))); !os.IsNotExist(err) {
		t.Fatalf("task cgroup left: %v", err)
	}
}

// newHarnessWith configures d with cfg behind Nomad's driver harness.
func newHarnessWith(t *testing.T, d *Driver, cfg Config) *dtestutil.DriverHarness {
	t.Helper()
	h := dtestutil.NewDriverHarness(t, d)
	t.Cleanup(h.Kill)
	var raw []byte
	if err := base.MsgPackEncode(&raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := h.SetConfig(&base.Config{PluginConfig: raw, AgentConfig: &base.AgentConfig{Driver: &base.ClientDriverConfig{Topology: topology}}}); err != nil {
		t.Fatal(err)
	}
	waitLooped(t, d)
	return h
}

// waitLooped waits for the guard loop's first tick, which measures the
// real host: a test that sets a fake source and ticks by hand must not
// have it land after its own ticks.
func waitLooped(t *testing.T, d *Driver) {
	t.Helper()
	select {
	case <-d.looped:
	case <-time.After(time.Minute):
		t.Fatal("the guard loop made no first tick in a minute")
	}
}

// Without a harvest cgroup nothing enforces the cap in whole CPUs, so the
// guard plans it unrounded.
func TestNoHarvestCgroupPlansTheCapUnrounded(t *testing.T) {
	d := New(hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Warn}))
	newHarnessWith(t, d, Config{Enabled: true, ReserveCPU: "1", ReserveMemory: "0", GuardInterval: "1h", SpikeCheck: "0", UsageSource: "proc",
		StaleAfter: "3h", HarvestCgroup: "none"})
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cgroup != nil || d.guard.Policy.WholeCPUs {
		t.Fatalf("cgroup %v, whole CPUs %v", d.cgroup, d.guard.Policy.WholeCPUs)
	}
}
