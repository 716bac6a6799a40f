package usage

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// fixedPlugin is a usage-source plugin returning one sample.
type fixedPlugin struct{ u usagesource.Usage }

func (f *fixedPlugin) SetConfig(map[string]string) error { return nil }
func (f *fixedPlugin) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "fixed", Type: base.PluginTypeUsageSource}, nil
}
func (f *fixedPlugin) Sample(context.Context) (usagesource.Usage, error) { return f.u, nil }

// A host-measured sample loses the harvested tasks' use (never below 0), a
// primary-measured one keeps its values; bytes become MiB.
func TestPrimaryOfSubtractsHarvestedFromHostSamplesOnly(t *testing.T) {
	host := usagesource.Usage{HostMeasured: true, HostCPUCores: 2.5, HostMemoryBytes: 6<<30 + 512<<10,
		PrimaryCPUCores: 9, PrimaryMemoryBytes: 9 << 30}
	if got := PrimaryOf(host, guard.Resources{CPU: 0.75, MemoryMiB: 1024}); got != (guard.Resources{CPU: 1.75, MemoryMiB: 5120.5}) {
		t.Fatalf("host-measured: %+v, want 1.75 cores and 5120.5 MiB", got)
	}
	if got := PrimaryOf(host, guard.Resources{CPU: 3, MemoryMiB: 8192}); got != (guard.Resources{}) {
		t.Fatalf("harvested above the host: %+v, want 0", got)
	}
	primary := usagesource.Usage{HostCPUCores: 3.5, HostMemoryBytes: 8 << 30, PrimaryCPUCores: 1.25, PrimaryMemoryBytes: 3 << 30}
	if got := PrimaryOf(primary, guard.Resources{CPU: 1, MemoryMiB: 1024}); got != (guard.Resources{CPU: 1.25, MemoryMiB: 3072}) {
		t.Fatalf("primary-measured: %+v, want 1.25 cores and 3072 MiB whatever is harvested", got)
	}
}

func TestCapacityOfTakesWhatTheSampleReports(t *testing.T) {
	builtin := guard.Resources{CPU: 2, MemoryMiB: 1000}
	for _, c := range []struct {
		u    usagesource.Usage
		want guard.Resources
	}{
		{usagesource.Usage{}, builtin},
		{usagesource.Usage{CapacityCPUCores: 4}, guard.Resources{CPU: 4, MemoryMiB: 1000}},
		{usagesource.Usage{CapacityMemoryBytes: 4 << 30}, guard.Resources{CPU: 2, MemoryMiB: 4096}},
		{usagesource.Usage{CapacityCPUCores: math.Inf(1), CapacityMemoryBytes: 1 << 20}, guard.Resources{CPU: 2, MemoryMiB: 1}},
	} {
		if got := CapacityOf(c.u, builtin); got != c.want {
			t.Errorf("CapacityOf(%+v) = %+v, want %+v", c.u, got, c.want)
		}
	}
}

// Proc served as a plugin says it measured the host, and read back through
// PluginSource gives what Proc's Primary gives; Cgroup's samples are the
// primary's own.
func TestBuiltinsRoundTripThroughThePluginType(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "meminfo"), "MemTotal: 16777216 kB\nMemAvailable: 8388608 kB\n")
	write(t, filepath.Join(root, "stat"), "cpu  100 0 100 800 0 0 0 0 0 0\n")
	p := Builtins()["proc"]
	src, err := p(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.SetConfig(map[string]string{"root": root}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "stat"), "cpu  500 0 300 1200 0 0 0 0 0 0\n") // 60% busy
	u, err := src.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cpus := float64(runtime.NumCPU())
	if !u.HostMeasured || math.Abs(u.HostCPUCores-0.6*cpus) > 1e-9 || u.HostMemoryBytes != 8<<30 ||
		u.CapacityCPUCores != cpus || u.CapacityMemoryBytes != 16<<30 || u.PrimaryCPUCores != 0 {
		t.Fatalf("proc sample %+v", u)
	}
	ps := NewPluginSource(context.Background(), &fixedPlugin{u}, "proc", guard.Resources{CPU: cpus, MemoryMiB: 16384})
	got, err := ps.Primary(guard.Resources{CPU: 0.2, MemoryMiB: 1024})
	if err != nil || math.Abs(got.CPU-(0.6*cpus-0.2)) > 1e-9 || got.MemoryMiB != 7168 {
		t.Fatalf("read back: %+v %v, want %.2f cores and 7168 MiB as Proc gives", got, err, 0.6*cpus-0.2)
	}

	cg := t.TempDir()
	write(t, filepath.Join(cg, "cpuacct", "primary", "cpuacct.usage"), "1000000000\n")
	write(t, filepath.Join(cg, "memory", "primary", "memory.usage_in_bytes"), "536870912\n")
	src, _ = Builtins()["cgroup"](nil)
	if err := src.SetConfig(map[string]string{"root": cg, "primary_cgroup": "/primary", "capacity_cpu": "2"}); err == nil ||
		!strings.Contains(err.Error(), "capacity_memory") {
		t.Fatalf("cgroup without capacity_memory: %v", err)
	}
	if err := src.SetConfig(map[string]string{"root": cg, "primary_cgroup": "/primary", "capacity_cpu": "2", "capacity_memory": "4096"}); err != nil {
		t.Fatal(err)
	}
	// a window of microseconds is too short to time: sample once a window
	// has had time to open (and again, should this machine preempt a read)
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		if u, err = src.Sample(context.Background()); !errors.Is(err, usagesource.ErrUncertainTiming) {
			break
		}
	}
	if err != nil || u.HostMeasured || u.PrimaryMemoryBytes != 512<<20 || u.CapacityCPUCores != 2 || u.CapacityMemoryBytes != 4<<30 {
		t.Fatalf("cgroup sample %+v %v", u, err)
	}
	if got := PrimaryOf(u, guard.Resources{MemoryMiB: 100}); got.MemoryMiB != 512 {
		t.Fatalf("cgroup read back %+v: harvested subtracted from a primary-measured sample", got)
	}
}

func TestBuiltinConfigAndSampleErrors(t *testing.T) {
	if _, err := New("proc", map[string]string{"capacity_cpu": "4"}); err == nil || !strings.Contains(err.Error(), `unknown config key "capacity_cpu"`) {
		t.Fatalf("proc with a cgroup key: %v", err)
	}
	if _, err := New("disk", nil); err == nil {
		t.Fatal("an unknown kind was accepted")
	}
	if _, err := (&Plugin{kind: "proc"}).Sample(context.Background()); err == nil {
		t.Fatal("an unconfigured built-in sampled")
	}
	for _, u := range []usagesource.Usage{{PrimaryCPUCores: math.NaN()}, {HostMeasured: true, HostCPUCores: -1}, {CapacityCPUCores: math.Inf(1)}} {
		ps := NewPluginSource(context.Background(), &fixedPlugin{u}, "bad", guard.Resources{CPU: 4})
		if _, err := ps.Primary(guard.Resources{}); err == nil || !strings.Contains(err.Error(), "invalid sample") {
			t.Errorf("sample %+v: %v, want invalid", u, err)
		}
	}
}
