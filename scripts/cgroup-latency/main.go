// Command cgroup-latency measures, on this host's real cgroup v1
// hierarchy and outside Nomad, what busy loops in a sibling cgroup cost a
// latency-critical process's tail under each way the harvest driver could
// hold them back (docs/driver.md, "Why a cpuset and not a quota"). Run as
// root on a quiet machine:
//
//	go run ./scripts/cgroup-latency -cycles 12
//
// The stand-in (internal/standin: 2 ms of CPU per request, 200 requests/s
// open loop) runs in a cgroup of its own; two busy loops per condition run
// in a sibling cgroup set up as the condition says, stopped (SIGSTOP) but
// in their window. Windows cycle alone and every condition in turn, so all
// see the same background; reported per condition: the median over cycles
// of its p99 over the same cycle's p99 alone, and the stand-in's CPU and
// run-queue wait per request (/proc/<pid>/task/*/schedstat), which tell a
// slower CPU from a CPU waited for. -background N adds N processes in the
// root cgroup that each run 1 ms in every 10 ms, as a host's other daemons
// do (the local cluster's agents), throughout.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harvest-platform/harvest/internal/proc"
	"github.com/harvest-platform/harvest/internal/standin"
)

// condition is one way of holding the busy loops back.
type condition struct {
	name   string
	shares int    // cpu.shares
	idle   bool   // cpu.idle = 1 (SCHED_IDLE)
	quota  int    // cpu.cfs_quota_us per period (-1: none)
	cpus   string // cpuset.cpus ("": every CPU; "last": the highest-numbered)
	period int    // cpu.cfs_period_us (0: the kernel's 100 ms)
}

var conditions = []condition{
	{"shares-2", 2, false, -1, "", 0},
	{"shares-2+quota-1.5", 2, false, 150000, "", 0},
	{"shares-2+quota-1", 2, false, 100000, "", 0},
	{"idle", 2, true, -1, "", 0},
	{"shares-1024", 1024, false, -1, "", 0},
	{"cpuset-1", 2, false, -1, "last", 0},
	{"cpuset-1+idle", 2, true, -1, "last", 0},
	{"cpuset-1+quota-0.5", 2, false, 50000, "last", 0},
	{"cpuset-1+idle+quota-0.34", 2, true, 34000, "last", 0},
	{"cpuset-1+idle+quota-0.5-per-2ms", 2, true, 1000, "last", 2000},
	{"cpuset-1+idle+quota-0.5-per-5ms", 2, true, 2500, "last", 5000},
}

const (
	root   = "/sys/fs/cgroup"
	prefix = "harvest-cgroup-latency-" // every cgroup of a run sits at the top, where a harvest parent competes
	rate   = 200
	serve  = "CGROUP_LATENCY_SERVE"
)

func main() {
	if addr := os.Getenv(serve); addr != "" {
		_ = standin.Serve(addr)
		os.Exit(3)
	}
	if len(os.Args) > 1 && os.Args[1] == "busy" {
		for {
		}
	}
	if len(os.Args) > 1 && os.Args[1] == "daemon" { // 1 ms of CPU in every 10 ms
		for {
			for end := time.Now().Add(time.Millisecond); time.Now().Before(end); {
			}
			time.Sleep(9 * time.Millisecond)
		}
	}
	cycles := flag.Int("cycles", 12, "cycles of windows (alone, then every condition)")
	window := flag.Duration("window", 3*time.Second, "one condition's window")
	only := flag.String("conditions", "", "comma-separated condition names to run (default: all)")
	own := flag.Bool("primary-cgroup", true, "run the stand-in in a cgroup of its own (false: in the root cgroup, beside every other process)")
	background := flag.Int("background", 0, "processes in the root cgroup running 1 ms in every 10 ms throughout")
	flag.Parse()
	if *only != "" {
		var keep []condition
		for _, c := range conditions {
			if strings.Contains(","+*only+",", ","+c.name+",") {
				keep = append(keep, c)
			}
		}
		conditions = keep
	}
	if err := run(*cycles, *window, *own, *background); err != nil {
		fmt.Fprintln(os.Stderr, "cgroup-latency:", err)
		os.Exit(1)
	}
}

func run(cycles int, window time.Duration, ownCgroup bool, background int) (err error) {
	if _, err := os.Stat(filepath.Join(root, "cpu", "cpu.shares")); err != nil {
		return fmt.Errorf("needs a cgroup v1 cpu hierarchy at %s/cpu: %w", root, err)
	}
	var started []*exec.Cmd
	defer func() { // every process and cgroup this run made goes
		for _, c := range started {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		for _, ctrl := range []string{"cpu", "cpuset"} {
			dirs, _ := filepath.Glob(filepath.Join(root, ctrl, prefix+"*"))
			for _, d := range dirs {
				_ = os.Remove(d)
			}
		}
	}()
	self, _ := os.Executable()
	start := func(env string, args ...string) (*exec.Cmd, error) {
		c := exec.Command(self, args...)
		if env != "" {
			c.Env = append(os.Environ(), env)
		}
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			return nil, err
		}
		started = append(started, c)
		return c, nil
	}
	addr := "127.0.0.1:18555"
	srv, err := start(serve+"="+addr, "serve")
	if err != nil {
		return err
	}
	if ownCgroup {
		if err := join("cpu", "primary", nil, srv.Process.Pid); err != nil {
			return err
		}
	}
	for range background {
		if _, err := start("", "daemon"); err != nil {
			return err
		}
	}
	busy := map[string][]int{}
	for _, c := range conditions {
		for range 2 {
			b, err := start("", "busy")
			if err != nil {
				return err
			}
			_ = syscall.Kill(b.Process.Pid, syscall.SIGSTOP)
			busy[c.name] = append(busy[c.name], b.Process.Pid)
		}
		files := map[string]string{"cpu.shares": strconv.Itoa(c.shares), "cpu.cfs_quota_us": strconv.Itoa(c.quota),
			"cpu.cfs_period_us": strconv.Itoa(cmp.Or(c.period, 100000))}
		if idle := filepath.Join(root, "cpu", "cpu.idle"); c.idle && exists(idle) {
			files["cpu.idle"] = "1"
		}
		if err := join("cpu", c.name, files, busy[c.name]...); err != nil {
			return err
		}
		if c.cpus != "" {
			last := strconv.Itoa(runtime.NumCPU() - 1)
			if err := join("cpuset", c.name, map[string]string{"cpuset.cpus": last, "cpuset.mems": "0"}, busy[c.name]...); err != nil {
				return err
			}
		}
	}
	time.Sleep(300 * time.Millisecond)
	standin.Latencies(addr, rate, 2*time.Second) // warm up
	ratios := map[string][]float64{}
	per := map[string]*perRequest{"alone": {}}
	for _, c := range conditions {
		per[c.name] = &perRequest{}
	}
	for cyc := range cycles {
		alone := per["alone"].p99(addr, window, srv.Process.Pid)
		line := fmt.Sprintf("cycle %2d p99 ms: alone %.2f", cyc+1, alone)
		for _, c := range conditions {
			signal(busy[c.name], syscall.SIGCONT)
			q := per[c.name].p99(addr, window, srv.Process.Pid)
			signal(busy[c.name], syscall.SIGSTOP)
			ratios[c.name] = append(ratios[c.name], q/alone)
			line += fmt.Sprintf("  %s %.2f", c.name, q)
		}
		fmt.Println(line)
	}
	fmt.Printf("the stand-in per request (ms): CPU, waiting for a CPU (every thread of it)\n  %-28s %.3f  %.3f\n", "alone", per["alone"].cpu(), per["alone"].wait())
	for _, c := range conditions {
		fmt.Printf("  %-28s %.3f  %.3f\n", c.name, per[c.name].cpu(), per[c.name].wait())
	}
	fmt.Printf("p99 over the same cycle's p99 alone, median of %d cycles of %s windows:\n", cycles, window)
	for _, c := range conditions {
		var each []string
		for _, r := range ratios[c.name] {
			each = append(each, fmt.Sprintf("%.2f", r))
		}
		fmt.Printf("  %-28s %.3f  [%s]\n", c.name, standin.Median(ratios[c.name]), strings.Join(each, " "))
	}
	return nil
}

// join makes <ctrl>/<prefix><name> at the top of the hierarchy (nested
// under a parent of default weight, its own weight would not count against
// the stand-in), writes files there (cpuset first), and moves pids (every
// thread) into it.
func join(ctrl, name string, files map[string]string, pids ...int) error {
	dir := filepath.Join(root, ctrl, prefix+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"cpuset.cpus", "cpuset.mems", "cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.idle"} {
		if v, ok := files[f]; ok {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				return err
			}
		}
	}
	for _, pid := range pids {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, t := range tasks {
			if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(t.Name()), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// perRequest sums a condition's requests and the stand-in's CPU and
// run-queue wait over its windows.
type perRequest struct{ requests, cpuNS, waitNS float64 }

// p99 drives the stand-in for d and returns the window's p99 (ms).
func (r *perRequest) p99(addr string, d time.Duration, pid int) float64 {
	cpu0, wait0 := proc.Schedstat(pid)
	lat, _ := standin.Latencies(addr, rate, d)
	cpu1, wait1 := proc.Schedstat(pid)
	r.requests += float64(len(lat))
	r.cpuNS, r.waitNS = r.cpuNS+float64(cpu1-cpu0), r.waitNS+float64(wait1-wait0)
	return standin.Quantiles(lat)[1]
}

func (r *perRequest) cpu() float64  { return r.cpuNS / r.requests / 1e6 }
func (r *perRequest) wait() float64 { return r.waitNS / r.requests / 1e6 }

func signal(pids []int, sig syscall.Signal) {
	for _, p := range pids {
		_ = syscall.Kill(p, sig)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
