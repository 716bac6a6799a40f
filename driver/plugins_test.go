package driver

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nstructs "github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/base"

	"github.com/harvest-platform/harvest/driver/guard"
)

// These run the real harvest-usage-prometheus (plugins_harness_test.go) as
// the driver's usage plugin, over go-plugin, with this host's /proc as the
// built-in fallback.

// The guard reads the plugin's primary: at ~2.8 of the plugin's 4 cores
// (rounded up to 3) it evicts the harvested task and refuses another, as
// TestEvictionIsYoungestFirstMinimalAndSaysWhy does with a fake source.
func TestUsagePluginDrivesTheGuard(t *testing.T) {
	e := newExporter(t, 0.2)
	h, d := newPluginHarness(t, e)
	fp := d.fingerprint(roomAttr{})
	if attr(fp, "driver.harvest.usage_plugin") != "node" || attr(fp, "driver.harvest.usage_plugin_state") != "up" ||
		attr(fp, "driver.harvest.usage_source") != "proc" || d.settings.capacity != (guard.Resources{CPU: 4, MemoryMiB: 4096}) {
		t.Fatalf("fingerprint %v, capacity %+v: want plugin node up over proc, the plugin's 4 cores and 4096 MiB", fp.Attributes, d.settings.capacity)
	}
	if p := measure(d); !near(p.CPU, 0.2, 0.15) || p.MemoryMiB != 3072 {
		t.Fatalf("primary %+v, want the plugin's ~0.2 cores and 3072 MiB", p)
	}
	cfg := task(t, h, d, "harvested", "/bin/sleep", "300")
	start(t, h, cfg) // 4 - 1 - 1 = 2 free >= 1 reserved

	e.setRate(2.8)
	time.Sleep(300 * time.Millisecond)
	measure(d) // rates across the change: may evict already
	time.Sleep(300 * time.Millisecond)
	if p := measure(d); !near(p.CPU, 2.8, 0.15) || p.MemoryMiB != 3072 {
		t.Fatalf("primary %+v, want the plugin's ~2.8 cores", p)
	}
	if res := wait(t, h, cfg.ID); res.Err == nil || !strings.Contains(res.Err.Error(), "evicted: primary tenant needs 3 cores") {
		t.Fatalf("exit %+v: not evicted for a primary of 3 cores", res)
	}
	extra := task(t, h, d, "extra", "/bin/sleep", "300")
	if _, _, err := h.StartTask(extra); err == nil || !nstructs.IsRecoverable(err) || !strings.Contains(err.Error(), "below the primary tenant's reserve") {
		t.Fatalf("start at 3 of 4 cores: %v", err)
	}
}

// A killed plugin: the guard reads the built-in (this host's /proc) and the
// fingerprint says so at once; the plugin is restarted and read again; after
// Shutdown no plugin process is left.
func TestUsagePluginKilledFallsBackAndComesBack(t *testing.T) {
	e := newExporter(t, 0.5)
	h, d := newPluginHarness(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fps, err := h.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	untilFingerprint(t, fps, "up")
	if p := measure(d); p.MemoryMiB != 3072 {
		t.Fatalf("primary %+v, want the plugin's 3072 MiB", p)
	}
	pid := pluginPid(t, d)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	untilFingerprint(t, fps, "down(fallback)")
	host := hostUsedMiB(t)
	if p := measure(d); p.MemoryMiB == 3072 || !near(p.MemoryMiB, host, 512) || p.CPU > float64(len(topology.UsableCores().Slice())) {
		t.Fatalf("primary %+v while the plugin is down, want this host's (%.0f MiB used)", p, host)
	}
	if !d.plugin.fb.OnBuiltin() || metric(t, d, "harvest_plugin_fallback_active", "plugin=node") != 1 ||
		metric(t, d, "harvest_plugin_failures_total", "kind=crash,plugin=node") != 1 {
		t.Fatalf("fallback %v, metrics fallback_active %v crash failures %v", d.plugin.fb.OnBuiltin(),
			metric(t, d, "harvest_plugin_fallback_active", "plugin=node"), metric(t, d, "harvest_plugin_failures_total", "kind=crash,plugin=node"))
	}

	deadline := time.Now().Add(10 * time.Second)
	for measure(d).MemoryMiB != 3072 { // restarted after restart_backoff (300 ms, jittered)
		if time.Now().After(deadline) {
			t.Fatal("the guard did not read the restarted plugin within 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	untilFingerprint(t, fps, "up")
	newPid := pluginPid(t, d)
	if newPid == pid || newPid == 0 || metric(t, d, "harvest_plugin_restarts_total", "plugin=node") != 1 ||
		metric(t, d, "harvest_plugin_up", "plugin=node") != 1 || metric(t, d, "harvest_plugin_fallback_active", "plugin=node") != 0 {
		t.Fatalf("after the restart: pid %d (was %d), metrics %v", newPid, pid, d.Metrics())
	}

	d.Shutdown()
	if err := syscall.Kill(newPid, 0); err != syscall.ESRCH {
		t.Fatalf("plugin process %d after Shutdown: %v", newPid, err)
	}
	bin := filepath.Join(usagePluginDir(t), "harvest-usage-prometheus")
	if out, err := exec.Command("pgrep", "-f", bin).Output(); err == nil || len(out) != 0 {
		t.Fatalf("pgrep -f %s after Shutdown: %q (%v)", bin, out, err)
	}
}

// The real plugin answering NaN cores (its endpoint's counter reads NaN):
// the guard reads the built-in (this host's /proc) while the plugin's
// process stays up, and the plugin again once its samples are numbers.
func TestUsagePluginNaNHandsOverToTheBuiltin(t *testing.T) {
	e := newExporter(t, 0.5)
	h, d := newPluginHarness(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fps, err := h.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	untilFingerprint(t, fps, "up")
	pid := pluginPid(t, d)
	e.nan.Store(true)
	host := hostUsedMiB(t)
	if p := measure(d); p.MemoryMiB == 3072 || !near(p.MemoryMiB, host, 512) || math.IsNaN(p.CPU) {
		t.Fatalf("primary %+v with a NaN plugin, want this host's (%.0f MiB used)", p, host)
	}
	untilFingerprint(t, fps, "down(fallback)")
	if metric(t, d, "harvest_plugin_fallback_active", "plugin=node") != 1 || pluginPid(t, d) != pid {
		t.Fatalf("fallback_active %v, plugin pid %d (was %d): want the built-in read, the plugin not restarted",
			metric(t, d, "harvest_plugin_fallback_active", "plugin=node"), pluginPid(t, d), pid)
	}
	d.mu.Lock()
	failSafe := d.failSafe
	d.mu.Unlock()
	if failSafe {
		t.Fatal("failing safe although the built-in measures")
	}
	e.nan.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for measure(d).MemoryMiB != 3072 { // the plugin's next rate spans the NaN reading: one more sample
		if time.Now().After(deadline) {
			t.Fatal("the guard did not read the plugin again within 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	untilFingerprint(t, fps, "up")
}

// A hanging endpoint makes the plugin's Sample outlast call_timeout (1 s):
// that pass measures with the built-in, the plugin is killed and restarted,
// and once the endpoint answers the guard reads the plugin again.
func TestUsagePluginHungFallsBack(t *testing.T) {
	e := newExporter(t, 0.5)
	_, d := newPluginHarness(t, e)
	if p := measure(d); p.MemoryMiB != 3072 {
		t.Fatalf("primary %+v, want the plugin's 3072 MiB", p)
	}
	e.hang.Store(true)
	began := time.Now()
	p := measure(d)
	took := time.Since(began)
	if p.MemoryMiB == 3072 || !near(p.MemoryMiB, hostUsedMiB(t), 512) || took < 900*time.Millisecond || took > 3*time.Second {
		t.Fatalf("hung pass: primary %+v after %v, want this host's after ~1 s", p, took)
	}
	if s := attr(d.fingerprint(roomAttr{}), "driver.harvest.usage_plugin_state"); s != "down(fallback)" ||
		metric(t, d, "harvest_plugin_failures_total", "kind=hang,plugin=node") < 1 {
		t.Fatalf("state %q, hang failures %v", s, metric(t, d, "harvest_plugin_failures_total", "kind=hang,plugin=node"))
	}
	e.hang.Store(false)
	deadline := time.Now().Add(15 * time.Second)
	for measure(d).MemoryMiB != 3072 {
		if time.Now().After(deadline) {
			t.Fatal("the guard did not read the plugin again within 15 s of the endpoint answering")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := attr(d.fingerprint(roomAttr{}), "driver.harvest.usage_plugin_state"); s != "up" {
		t.Fatalf("state %q after recovery", s)
	}
}

// The plugin attributes are checked at SetConfig, with the reason.
func TestUsagePluginConfigErrors(t *testing.T) {
	e := newExporter(t, 0)
	file := pluginFile(t, e)
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	if err := os.WriteFile(bad, []byte("plugin_dir = \"/nonexistent\"\nusage_source \"proc\" {\n  driver = \"x\"\n}\nusage_source \"gone\" {\n  driver = \"x\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{UsagePlugin: "node", HarvestCgroup: "none"}, `usage_plugin "node" needs plugin_config`},
		{Config{PluginConfig: file, HarvestCgroup: "none"}, "plugin_config is set but usage_plugin is not"},
		{Config{PluginConfig: file, UsagePlugin: "nope", HarvestCgroup: "none"}, `has no usage_source "nope" block (it has ["node"])`},
		{Config{PluginConfig: "/nonexistent.hcl", UsagePlugin: "node", HarvestCgroup: "none"}, "plugin_config: open /nonexistent.hcl"},
		{Config{PluginConfig: bad, UsagePlugin: "proc", HarvestCgroup: "none"}, `the name is the built-in fallback's (usage_source = "proc")`},
		{Config{PluginConfig: bad, UsagePlugin: "gone", HarvestCgroup: "none"}, "nor an executable file in plugin_dir"},
		{Config{PluginConfig: file, UsagePlugin: "node", CapacityCPU: 4, HarvestCgroup: "none"}, "capacity_cpu and capacity_memory are for usage_source"},
	} {
		c.cfg.Enabled, c.cfg.UsageSource = true, "proc"
		var raw []byte
		if err := base.MsgPackEncode(&raw, &c.cfg); err != nil {
			t.Fatal(err)
		}
		d := New(hclog.NewNullLogger())
		err := d.SetConfig(&base.Config{PluginConfig: raw})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
		d.Shutdown()
	}
}
