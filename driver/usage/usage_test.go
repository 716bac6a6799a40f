package usage

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProcSubtractsHarvestedFromHost(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "meminfo"), "MemTotal: 16777216 kB\nMemFree: 1 kB\nMemAvailable: 8388608 kB\n")
	write(t, filepath.Join(root, "stat"), "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 1 1 1\n")
	p, err := NewProc(root)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 more jiffies, 600 of them busy: 60% of the host's CPUs
	write(t, filepath.Join(root, "stat"), "cpu  500 0 300 1200 0 0 0 0 0 0\n")
	got, err := p.Primary(guard.Resources{CPU: 0.2, MemoryMiB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	wantCPU := 0.6*float64(runtime.NumCPU()) - 0.2
	if math.Abs(got.CPU-wantCPU) > 1e-9 || got.MemoryMiB != 8192-1024 {
		t.Fatalf("primary %+v, want %.2f cores and 7168 MiB", got, wantCPU)
	}
	if p.Capacity().MemoryMiB != 16384 {
		t.Fatalf("capacity %+v", p.Capacity())
	}
	write(t, filepath.Join(root, "stat"), "intr 1 2\n")
	if _, err := p.Primary(guard.Resources{}); err == nil {
		t.Fatal("a stat file without a cpu line was accepted")
	}
}

func TestCgroupV1AndV2(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		root := t.TempDir()
		cpu, mem := filepath.Join(root, "cpuacct", "primary", "cpuacct.usage"), filepath.Join(root, "memory", "primary", "memory.usage_in_bytes")
		if v2 {
			write(t, filepath.Join(root, "cgroup.controllers"), "cpu memory\n")
			cpu, mem = filepath.Join(root, "primary", "cpu.stat"), filepath.Join(root, "primary", "memory.current")
		}
		setCPU := func(ns uint64) {
			if v2 {
				write(t, cpu, "usage_usec "+itoa(ns/1000)+"\nuser_usec 0\n")
			} else {
				write(t, cpu, itoa(ns)+"\n")
			}
		}
		setCPU(1_000_000_000)
		write(t, mem, itoa(512<<20)+"\n")
		c, err := NewCgroup(root, "/primary", guard.Resources{CPU: 4, MemoryMiB: 8192})
		if err != nil {
			t.Fatalf("v2=%v: %v", v2, err)
		}
		clock := time.Now()
		c.now = func() time.Time { return clock }
		if err := c.restart(); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(2 * time.Second)
		setCPU(4_000_000_000) // 3 s of CPU in 2 s: 1.5 cores
		got, err := c.Primary(guard.Resources{CPU: 9})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.CPU-1.5) > 1e-9 || got.MemoryMiB != 512 {
			t.Fatalf("v2=%v: primary %+v, want 1.5 cores, 512 MiB", v2, got)
		}
		// what the local cluster's exporter publishes: the same counters
		if sec, bytes, err := c.Counters(); err != nil || sec != 4 || bytes != 512<<20 {
			t.Fatalf("v2=%v: counters %v s, %v bytes, %v; want 4 s, 512 MiB", v2, sec, bytes, err)
		}
	}
	if _, err := NewCgroup(t.TempDir(), "/missing", guard.Resources{}); err == nil {
		t.Fatal("a missing cgroup was accepted")
	}
}

func itoa(v uint64) string { return fmt.Sprint(v) }

// PeekCPU reads its own window: peeking does not shorten the one Primary
// averages over, and Primary does not move the peek's.
func TestPeekHasAWindowOfItsOwn(t *testing.T) {
	root := t.TempDir()
	cpu := filepath.Join(root, "cpuacct", "primary", "cpuacct.usage")
	write(t, cpu, "0\n")
	write(t, filepath.Join(root, "memory", "primary", "memory.usage_in_bytes"), "0\n")
	c, err := NewCgroup(root, "/primary", guard.Resources{CPU: 4, MemoryMiB: 8192})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	c.now = func() time.Time { return clock }
	if err := c.restart(); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(150 * time.Millisecond)
	write(t, cpu, "15000000\n") // 0.1 cores over the first 150 ms
	if got, _ := c.PeekCPU(nil); math.Abs(got.Cores-0.1) > 1e-9 {
		t.Fatalf("first peek %v cores, want 0.1", got)
	}
	clock = clock.Add(50 * time.Millisecond)
	write(t, cpu, "115000000\n") // then 2 cores for 50 ms
	if got, _ := c.PeekCPU(nil); math.Abs(got.Cores-2) > 1e-9 {
		t.Fatalf("second peek %v cores, want 2", got)
	}
	if got, _ := c.Primary(guard.Resources{}); math.Abs(got.CPU-0.575) > 1e-9 {
		t.Fatalf("Primary over the whole 200 ms: %v cores, want 0.575", got.CPU)
	}

	proc := t.TempDir()
	write(t, filepath.Join(proc, "meminfo"), "MemTotal: 16777216 kB\nMemAvailable: 8388608 kB\n")
	write(t, filepath.Join(proc, "stat"), "cpu  0 0 0 0 0 0 0 0 0 0\n")
	p, err := NewProc(proc)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(proc, "stat"), "cpu  50 0 0 50 0 0 0 0 0 0\n") // half busy
	n := float64(runtime.NumCPU())
	if got, _ := p.PeekCPU(func() float64 { return 0.1 }); math.Abs(got.Cores-(0.5*n-0.1)) > 1e-9 || got.Least != got.Cores {
		t.Fatalf("proc peek %v cores, want half the host less the harvested 0.1", got)
	}
	write(t, filepath.Join(proc, "stat"), "cpu  50 0 0 150 0 0 0 0 0 0\n") // then idle
	if got, _ := p.PeekCPU(func() float64 { return 0 }); got.Cores != 0 {
		t.Fatalf("proc peek over an idle window: %v cores", got)
	}
	if got, _ := p.Primary(guard.Resources{}); math.Abs(got.CPU-0.25*n) > 1e-9 {
		t.Fatalf("proc Primary over both windows: %v cores, want a quarter of the host", got.CPU)
	}
}
