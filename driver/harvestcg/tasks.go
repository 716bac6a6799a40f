package harvestcg

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/internal/proc"
)

// adoptPasses bounds Adopt's passes: each moves the processes listed so
// far, and a process that forked meanwhile is caught by the next (paused
// 2, 4, ... up to adoptPause ms after the one before: about 0.3 s in all).
const adoptPasses = 10

// TaskCgroupV2 makes a task's cgroup under the parent (v2 only) and returns
// its absolute path, for Nomad's executor to start the task in.
func (p *Parent) TaskCgroupV2(name string) (string, error) {
	if p.v != V2 {
		return "", fmt.Errorf("TaskCgroupV2 on a %s host", p.v)
	}
	dir := filepath.Join(p.cpu, name+".scope")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// Adopt moves the task's processes, as pids lists them now (e.g. the
// cgroup.procs of the freezer cgroup Nomad's executor placed the task in),
// into the task's cgroups under the parent in the cpu, cpuacct and blkio
// hierarchies and into the cpuset parent itself (v1 only), and gives it
// shares there (its weight among the
// harvested tasks; 0 leaves the kernel's default). It lists and moves again
// until every listed process is inside or exiting, and returns how many it
// moved; past adoptPasses its error names the processes left outside.
func (p *Parent) Adopt(name string, pids func() ([]int, error), shares int64) (int, error) {
	if p.v != V1 {
		return 0, fmt.Errorf("Adopt on a %s host", p.v)
	}
	var dirs []string
	for _, d := range p.Dirs() {
		dir := filepath.Join(d, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		dirs = append(dirs, dir)
	}
	if shares > 0 {
		if err := writeFile(filepath.Join(dirs[0], "cpu.shares"), strconv.FormatInt(max(2, shares), 10), false); err != nil {
			return 0, err
		}
	}
	moved := map[int]bool{}
	var left []int
	for pass := range adoptPasses {
		if pass > 0 {
			// what a pass could not move was forked meanwhile or is
			// exiting: give it the time to be born or to go
			time.Sleep(min(time.Millisecond<<pass, adoptPause))
		}
		listed, err := pids()
		if err != nil {
			return len(moved), err
		}
		inside, err := ReadPIDs(filepath.Join(dirs[0], "cgroup.procs"))
		if err != nil {
			return len(moved), err
		}
		// an exiting process stays listed where it was until it is gone,
		// and the kernel moves it nowhere (it runs no more of its own code)
		left = slices.DeleteFunc(listed, func(pid int) bool { return slices.Contains(inside, pid) || proc.Exiting(pid) })
		if len(left) == 0 {
			return len(moved), nil
		}
		targets := dirs
		if p.cpuset != "" {
			targets = append(slices.Clip(dirs), p.cpuset)
		}
		for _, pid := range left {
			for _, d := range targets {
				err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)+"\n", true)
				if err != nil && !errors.Is(err, os.ErrNotExist) && !isGone(err) {
					return len(moved), err
				}
			}
			moved[pid] = true
		}
	}
	return len(moved), fmt.Errorf("%s: processes still outside after %d passes: %s", name, adoptPasses, describe(left))
}

// adoptPause is the longest pause between two of Adopt's passes.
const adoptPause = 64 * time.Millisecond

// describe names processes for an error: their pid, command and cpu cgroup
// as /proc shows them now.
func describe(pids []int) string {
	out := make([]string, 0, len(pids))
	for _, pid := range pids {
		comm, _ := proc.Stat(pid)
		out = append(out, fmt.Sprintf("%d (%s, cpu cgroup %s)", pid, comm, cpuCgroupOf(pid)))
	}
	return strings.Join(out, ", ")
}

// cpuCgroupOf is pid's cgroup in the v1 cpu hierarchy ("" when /proc does
// not say).
func cpuCgroupOf(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
			return parts[2]
		}
	}
	return ""
}

// isGone reports whether a cgroup.procs write failed because the process
// exited meanwhile (ESRCH).
func isGone(err error) bool { return strings.Contains(err.Error(), "no such process") }

// Release removes a task's cgroups under the parent once its processes are
// gone; it waits up to a second for exiting processes to leave them.
func (p *Parent) Release(name string) error {
	var dirs []string
	if p.v == V2 {
		dirs = []string{filepath.Join(p.cpu, name+".scope")}
	} else {
		for _, d := range p.Dirs() {
			dirs = append(dirs, filepath.Join(d, name))
		}
	}
	var errs []error
	for _, d := range dirs {
		var err error
		for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
			if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stats are the parent's cumulative counters.
type Stats struct {
	CPUSeconds       float64 // CPU the harvested tasks used (NaN where not accounted)
	ThrottledPeriods uint64  // CFS periods in which the cap stopped them
	ThrottledSeconds float64 // how long the cap stopped them, summed over CPUs
}

// Stats reads the parent's counters.
func (p *Parent) Stats() (Stats, error) {
	st := map[string]uint64{}
	if err := readKV(filepath.Join(p.cpu, "cpu.stat"), st); err != nil {
		return Stats{}, err
	}
	s := Stats{ThrottledPeriods: st["nr_throttled"]}
	if p.v == V2 {
		s.CPUSeconds = float64(st["usage_usec"]) / 1e6
		s.ThrottledSeconds = float64(st["throttled_usec"]) / 1e6
		return s, nil
	}
	s.ThrottledSeconds = float64(st["throttled_time"]) / 1e9
	acct := p.acct
	if acct == "" {
		acct = p.cpu // cpu and cpuacct co-mounted
	}
	data, err := os.ReadFile(filepath.Join(acct, "cpuacct.usage"))
	if err != nil {
		s.CPUSeconds = nan()
		return s, nil
	}
	ns, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return s, fmt.Errorf("%s/cpuacct.usage: %w", acct, err)
	}
	s.CPUSeconds = float64(ns) / 1e9
	return s, nil
}

func nan() float64 { return math.NaN() }

// ReadPIDs reads a cgroup.procs file.
func ReadPIDs(path string) ([]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(out, pid) {
			out = append(out, pid)
		}
	}
	return out, nil
}

func readKV(path string, into map[string]uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			into[k] = n
		}
	}
	return sc.Err()
}
