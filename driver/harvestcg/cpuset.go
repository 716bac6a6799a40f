package harvestcg

// The cap by cpuset (CapCpuset, the default): the guard's cap confines the
// harvested tasks to whole CPUs, the highest-numbered of the ones the
// parent may use, so that the primary tenant keeps the others to itself
// and never waits behind a harvested thread there. With less than one CPU
// to give they keep one CPU, where their lowest weight (and SCHED_IDLE,
// with which the kernel counts that CPU as idle for a waking primary
// thread) yields it to the primary; with nothing to give (a cap of 0) a CFS
// quota of 1 ms per period all but stops them until the guard evicts them.
// Koordinator's default cpuSuppressPolicy for best-effort pods is a cpuset
// too.
//
// Why not a CFS quota over every CPU (CapQuota): measured on the local
// cluster and outside Nomad (docs/driver.md, "Why a cpuset, SCHED_IDLE, and
// a quota only at nothing"), a quota costs a latency-critical primary's
// tail more than the CPU time it takes away. The price of whole CPUs is at
// most one CPU of harvest left unused below the cap (half of a 2-CPU
// machine; a fiftieth of a 48-core server).

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CapMethod is how the parent enforces the guard's cap.
type CapMethod string

// The methods.
const (
	// CapCpuset confines the tasks to floor(cap) whole CPUs, and to one
	// CPU below that; a cap of 0 also stops them with the least CFS quota.
	CapCpuset CapMethod = "cpuset"
	// CapQuota throttles the tasks with a CFS quota of the cap over every CPU.
	CapQuota CapMethod = "quota"
)

// ParseCapMethod checks a cap_method value ("" is CapCpuset).
func ParseCapMethod(s string) (CapMethod, error) {
	switch m := CapMethod(strings.TrimSpace(s)); m {
	case "", CapCpuset:
		return CapCpuset, nil
	case CapQuota:
		return m, nil
	}
	return "", fmt.Errorf("cap_method %q: want %q or %q", s, CapCpuset, CapQuota)
}

// ParseCPUList reads the kernel's CPU list format ("0-3,8,10-11").
func ParseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("CPU list %q: bad part %q", s, part)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatCPUList writes cpus (sorted) in the kernel's list format (taskset -c takes it too).
func FormatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i])+"-"+strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// CpusetPlan is how cores of cap are enforced on the allowed CPUs: the
// CPUs the tasks may run on and the CFS quota (µs per period; -1 for none).
// A cap of every allowed CPU or more, or below 0, is no cap; a cap in (0,
// 1) is one CPU without a quota (the tasks are suppressed, and only their
// weight holds them back there); a cap of 0 is one CPU and the kernel's
// least quota.
func CpusetPlan(allowed []int, cores float64, period int64) ([]int, int64) {
	if cores < 0 || math.IsInf(cores, 1) || len(allowed) == 0 {
		return allowed, -1
	}
	whole := int(math.Floor(cores + 1e-9))
	switch {
	case whole >= len(allowed):
		return allowed, -1
	case whole >= 1:
		return allowed[len(allowed)-whole:], -1
	case cores > 1e-9:
		return allowed[len(allowed)-1:], -1
	}
	return allowed[len(allowed)-1:], minQuota
}

// openCpuset sets up the parent's cpuset in dir (v1: cpuset/<parent>; v2:
// the parent, cpuset enabled above it): the CPUs and memory nodes its own
// parent allows. A reopened parent keeps the CPUs it has (a restarted
// driver's tasks keep their cap) until the first SetCap. On a host without
// a cpuset controller the cap falls back to the quota.
func (p *Parent) openCpuset(dir string) error {
	cpusFile, memsFile := "cpuset.cpus", "cpuset.mems"
	if !exists(filepath.Join(dir, cpusFile)) {
		p.method = CapQuota
		p.settings = append(p.settings, "cpuset: not offered here, capping by CFS quota")
		return nil
	}
	above := filepath.Dir(dir)
	allowed, err := ParseCPUList(readFirst(above, "cpuset.effective_cpus", "cpuset.cpus.effective", cpusFile))
	if err != nil || len(allowed) == 0 {
		return fmt.Errorf("the CPUs %s allows: %v", above, err)
	}
	p.cpuset, p.allowed = dir, allowed
	if p.v == V1 && strings.TrimSpace(readFirst(dir, memsFile)) == "" {
		if err := p.write(dir, memsFile, strings.TrimSpace(readFirst(above, "cpuset.effective_mems", memsFile))); err != nil {
			return err
		}
	}
	if cur, err := ParseCPUList(readFirst(dir, cpusFile)); err == nil && len(cur) > 0 {
		p.cpus = cur
		p.settings = append(p.settings, strings.TrimPrefix(filepath.Join(dir, cpusFile), p.root+"/")+"="+FormatCPUList(cur)+" (kept)")
		return nil
	}
	if err := p.write(dir, cpusFile, FormatCPUList(allowed)); err != nil {
		return err
	}
	p.cpus = allowed
	return nil
}

// readFirst is the content of the first of files in dir that reads ("" if none).
func readFirst(dir string, files ...string) string {
	for _, f := range files {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			return string(b)
		}
	}
	return ""
}

// setCPUs confines the tasks to cpus; p.mu held.
func (p *Parent) setCPUs(cpus []int) error {
	if p.cpuset == "" || slices.Equal(cpus, p.cpus) {
		return nil
	}
	if err := writeFile(filepath.Join(p.cpuset, "cpuset.cpus"), FormatCPUList(cpus), false); err != nil {
		return err
	}
	p.cpus = cpus
	return nil
}
