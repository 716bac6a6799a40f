package driver

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/driver/usage"
)

// With the host-wide source, the primary is the host's busy CPU less the
// harvest cgroup's CPU over the same window, not less the executors' stats
// (here none yet: a spike that took the harvested tasks' CPU would hide).
func TestHostSourceSubtractsTheHarvestCgroupOverTheSameWindow(t *testing.T) {
	_, d, _ := newHarness(t)
	cgroups, procDir := t.TempDir(), t.TempDir()
	for p, c := range map[string]string{
		"cpu/cpu.shares": "1024", "cpuacct/cpuacct.usage": "0",
		"cpu/harvest/cpu.shares": "1024", "cpu/harvest/cpu.cfs_period_us": "100000", "cpu/harvest/cpu.cfs_quota_us": "-1",
		"cpu/harvest/cpu.stat": "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n", "cpuacct/harvest/cpuacct.usage": "0\n",
	} {
		writeFile(t, filepath.Join(cgroups, p), c)
	}
	writeFile(t, filepath.Join(procDir, "meminfo"), "MemTotal: 16777216 kB\nMemAvailable: 8388608 kB\n")
	writeFile(t, filepath.Join(procDir, "stat"), "cpu  0 0 0 0 0 0 0 0 0 0\n")
	cg, err := harvestcg.Open(harvestcg.Options{Root: cgroups, Path: "/harvest"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := usage.NewProc(procDir)
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.source, d.cgroup, d.peeker = src, cg, nil
	d.mu.Unlock()
	t0 := time.Now()
	clock := t0
	d.clock = func() time.Time { return clock }
	d.guardOnce(t0)
	// one second: the host fully busy, the harvested tasks 1 core of it
	writeFile(t, filepath.Join(procDir, "stat"), "cpu  1000 0 0 0 0 0 0 0 0 0\n")
	writeFile(t, filepath.Join(cgroups, "cpuacct/harvest/cpuacct.usage"), "1000000000\n")
	clock = t0.Add(time.Second)
	d.guardOnce(clock)
	d.mu.Lock()
	got := d.primary.CPU
	d.mu.Unlock()
	if want := float64(runtime.NumCPU()) - 1; math.Abs(got-want) > 1e-9 {
		t.Fatalf("primary %v cores, want the host's %d less the harvest cgroup's 1", got, runtime.NumCPU())
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
