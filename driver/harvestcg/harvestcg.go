// Package harvestcg is the harvest driver's edge to the kernel's cgroups:
// the parent cgroup every harvested task runs under. The parent sits at the
// level where it competes with the primary tenant (by default at the top
// of the hierarchy, beside system.slice, Nomad's own cgroups and the
// primary's) with the lowest CPU weight the kernel offers, and enforces the
// cap that the guard moves every tick (guard.CPUCap): by default as whole
// CPUs of its cpuset, below one CPU as a CFS quota (cpuset.go says why).
//
// cgroup v1 (one hierarchy per controller):
//
//	cpu/<parent>      cpu.shares = 2 (the minimum), then cpu.idle = 1 where the
//	                  kernel has it and Idle asks (5.15+: SCHED_IDLE for the
//	                  group: a waking primary thread takes its CPU at once); cpu.cfs_period_us = 100000, cpu.cfs_quota_us =
//	                  1 ms at a cap of 0 (CapCpuset) or the cap (CapQuota)
//	cpuset/<parent>   cpuset.cpus = floor(cap) CPUs (CapCpuset), every task's
//	                  processes in the parent itself
//	cpuacct/<parent>  when cpuacct is a hierarchy of its own: the harvested CPU
//	blkio/<parent>    blkio.bfq.weight = 1 or blkio.weight = 10 where one exists
//
// Nomad's executor keeps creating the task's freezer, memory and cpuset
// cgroups (limits, stats, kill); the driver then moves the task's processes
// into <parent>/<alloc>.<task> of the cpu, cpuacct and blkio hierarchies
// and into the cpuset parent (Adopt), which its children inherit.
//
// cgroup v2 (one tree): <parent> gets cpu.weight = 1, cpu.idle = 1 where the
// kernel has it and Idle asks, cpuset.cpus and cpu.max = "<quota> 100000"
// for the cap as on v1, io.weight = "default 1"
// and io.bfq.weight = 1 where they exist, and the controllers its children
// need enabled down to it. A task's cgroup is <parent>/<alloc>.<task>.scope,
// which the driver hands to Nomad's executor as its cgroup (the executor
// then writes the task's memory.max and cpu.weight there and starts the
// task in it).
//
// Writes never create files: a file the kernel does not offer is an error
// (or skipped, for the optional ones), so the tests run against a fake tree
// of plain files.
package harvestcg

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version is the cgroup layout of a host.
type Version int

// The layouts.
const (
	None Version = iota // no usable cpu controller
	V1
	V2
)

func (v Version) String() string { return [...]string{"none", "v1", "v2"}[v] }

// Detect tells the layout under root (/sys/fs/cgroup): v2 when root is the
// unified hierarchy, v1 when it holds a cpu controller hierarchy.
func Detect(root string) Version {
	if exists(filepath.Join(root, "cgroup.controllers")) {
		return V2
	}
	if exists(filepath.Join(root, "cpu", "cpu.shares")) {
		return V1
	}
	return None
}

// DefaultPeriod is the CFS period of the cap.
const DefaultPeriod = 100 * time.Millisecond

// minQuota is the smallest CFS quota the kernel takes (1 ms per period).
const minQuota = 1000

// Options say where the parent is and how it is set up.
type Options struct {
	Root   string        // where the hierarchies are mounted: /sys/fs/cgroup
	Path   string        // the parent, relative to each hierarchy (v1) or the tree (v2): "/harvest"
	Idle   bool          // also mark it SCHED_IDLE (cpu.idle = 1) where the kernel has cpu.idle
	Period time.Duration // the CFS period (DefaultPeriod when 0)
	Cap    CapMethod     // how the cap is enforced ("": CapCpuset)
}

// Parent is the harvested tasks' parent cgroup.
type Parent struct {
	root     string
	v        Version
	period   int64  // µs
	cpu      string // v1: cpu/<parent>; v2: <parent>
	acct     string // v1: cpuacct/<parent> when cpuacct is its own hierarchy
	io       string // v1: blkio/<parent> when blkio exists
	cpuset   string // v1: cpuset/<parent>; v2: <parent>; "" when the cap is a quota only
	allowed  []int  // the CPUs the parent's own parent allows (CapCpuset)
	method   CapMethod
	settings []string

	mu    sync.Mutex
	quota int64 // the last quota written (0: none yet)
	cpus  []int // the CPUs the tasks are confined to now (CapCpuset)
}

// Open creates (or takes over) the parent and sets its weights. It leaves
// the quota as it finds it (a new cgroup's is none; a restarted driver's
// tasks keep their cap) until the first SetCap.
func Open(o Options) (*Parent, error) {
	rel := strings.Trim(o.Path, "/")
	if rel == "" || strings.Contains(rel, "..") {
		return nil, fmt.Errorf("harvest cgroup %q: want a path below the root such as /harvest", o.Path)
	}
	if o.Period <= 0 {
		o.Period = DefaultPeriod
	}
	method, err := ParseCapMethod(string(o.Cap))
	if err != nil {
		return nil, err
	}
	p := &Parent{root: filepath.Clean(o.Root), v: Detect(o.Root), period: o.Period.Microseconds(), method: method}
	switch p.v {
	case V1:
		err = p.openV1(o.Root, rel, o.Idle)
	case V2:
		err = p.openV2(o.Root, rel, o.Idle)
	default:
		return nil, fmt.Errorf("no cpu cgroup controller under %s", o.Root)
	}
	if err != nil {
		return nil, fmt.Errorf("harvest cgroup %s (%s): %w", o.Path, p.v, err)
	}
	return p, nil
}

func (p *Parent) openV1(root, rel string, idle bool) error {
	seen := map[string]bool{}
	dir := func(ctrl string) string { // the parent in ctrl's hierarchy; "" if absent or already seen (co-mounted)
		real, err := filepath.EvalSymlinks(filepath.Join(root, ctrl))
		if err != nil || seen[real] {
			return ""
		}
		seen[real] = true
		return filepath.Join(root, ctrl, rel)
	}
	p.cpu, p.acct, p.io = dir("cpu"), dir("cpuacct"), dir("blkio")
	cpuset := ""
	if p.method == CapCpuset {
		if cpuset = dir("cpuset"); cpuset == "" {
			p.method = CapQuota
			p.settings = append(p.settings, "cpuset: no hierarchy of its own here, capping by CFS quota")
		}
	}
	for _, d := range []string{p.cpu, p.acct, p.io, cpuset} {
		if d != "" {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
	}
	if err := p.setWeight("cpu.shares", "2", idle); err != nil {
		return err
	}
	if err := p.write(p.cpu, "cpu.cfs_period_us", strconv.FormatInt(p.period, 10)); err != nil {
		return err
	}
	if cpuset != "" {
		if err := p.openCpuset(cpuset); err != nil {
			return err
		}
	}
	if p.io != "" {
		p.optional(p.io, "blkio.bfq.weight", "1")
		if !p.optional(p.io, "blkio.weight", "10") {
			p.settings = append(p.settings, "blkio: no weight file, I/O weight unchanged")
		}
	}
	return nil
}

func (p *Parent) openV2(root, rel string, idle bool) error {
	// enable the controllers the tasks' cgroups need, from the root down
	dir := root
	for _, part := range append(strings.Split(rel, "/"), "") {
		if err := enableControllers(dir); err != nil {
			return err
		}
		if part == "" {
			break
		}
		dir = filepath.Join(dir, part)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	p.cpu, p.io = dir, dir
	if err := p.setWeight("cpu.weight", "1", idle); err != nil {
		return err
	}
	p.optional(p.io, "io.weight", "default 1")
	p.optional(p.io, "io.bfq.weight", "1")
	if p.method == CapCpuset {
		return p.openCpuset(dir)
	}
	return nil
}

// enableControllers turns on, for dir's children, the controllers a task
// cgroup needs that dir offers.
func enableControllers(dir string) error {
	have, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return err
	}
	var want []string
	for _, c := range strings.Fields(string(have)) {
		switch c {
		case "cpu", "cpuset", "io", "memory", "pids":
			want = append(want, "+"+c)
		}
	}
	if len(want) == 0 {
		return nil
	}
	return writeFile(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(want, " "), false)
}

// setWeight writes the lowest weight, then cpu.idle (1 if idle, else 0)
// where the kernel has it. The kernel refuses a weight on an idle group, so
// an idle group is first made normal.
func (p *Parent) setWeight(file, lowest string, idle bool) error {
	hasIdle := exists(filepath.Join(p.cpu, "cpu.idle"))
	if cur, err := os.ReadFile(filepath.Join(p.cpu, "cpu.idle")); err == nil && idle && strings.TrimSpace(string(cur)) == "1" {
		// already idle (a restarted driver taking its tasks over): leave it,
		// rather than lift them to a normal weight for a moment
		p.settings = append(p.settings, strings.TrimPrefix(filepath.Join(p.cpu, "cpu.idle"), p.root+"/")+"=1 (kept)")
		return nil
	}
	if hasIdle {
		if err := p.write(p.cpu, "cpu.idle", "0"); err != nil {
			return err
		}
	}
	if err := p.write(p.cpu, file, lowest); err != nil {
		return err
	}
	if idle && hasIdle {
		return p.write(p.cpu, "cpu.idle", "1")
	}
	if idle {
		p.settings = append(p.settings, "cpu.idle: not offered by this kernel")
	}
	return nil
}

// Settings lists what Open wrote ("cpu/harvest/cpu.shares=2", ...) and what
// it could not, for the driver's log.
func (p *Parent) Settings() []string { return append([]string(nil), p.settings...) }

// Version is the layout the parent lives in.
func (p *Parent) Version() Version { return p.v }

// Dirs are the parent's directories (one per v1 hierarchy).
func (p *Parent) Dirs() []string {
	var out []string
	for _, d := range []string{p.cpu, p.acct, p.io} {
		if d != "" && (len(out) == 0 || out[len(out)-1] != d) {
			out = append(out, d)
		}
	}
	return out
}

func (p *Parent) write(dir, file, value string) error {
	if err := writeFile(filepath.Join(dir, file), value, false); err != nil {
		return err
	}
	p.settings = append(p.settings, strings.TrimPrefix(filepath.Join(dir, file), p.root+"/")+"="+value)
	return nil
}

// optional writes a file the kernel may not offer; it says whether it did.
func (p *Parent) optional(dir, file, value string) bool {
	if !exists(filepath.Join(dir, file)) {
		return false
	}
	return p.write(dir, file, value) == nil
}

// SetCap caps the harvested tasks' total CPU at cores (below 0: uncapped):
// CapCpuset confines them to floor(cores) whole CPUs, below one CPU to one
// CPU, and at 0 also to the kernel's least quota (CpusetPlan); CapQuota
// sets a quota of cores (at least 1 ms per period) over every CPU. It writes only what changes, and
// returns the cap now in force in cores (-1: uncapped).
func (p *Parent) SetCap(cores float64) (float64, error) {
	quota, cpus := int64(-1), p.allowed
	switch {
	case p.method == CapCpuset:
		cpus, quota = CpusetPlan(p.allowed, cores, p.period)
	case cores >= 0 && !math.IsInf(cores, 1):
		quota = max(minQuota, int64(math.Round(cores*float64(p.period))))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.setCPUs(cpus); err != nil {
		return p.cores(), err
	}
	if quota != p.quota {
		var err error
		if p.v == V1 {
			err = writeFile(filepath.Join(p.cpu, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10), false)
		} else {
			q := "max"
			if quota > 0 {
				q = strconv.FormatInt(quota, 10)
			}
			err = writeFile(filepath.Join(p.cpu, "cpu.max"), q+" "+strconv.FormatInt(p.period, 10), false)
		}
		if err != nil {
			return p.cores(), err
		}
		p.quota = quota
	}
	return p.cores(), nil
}

// cores is the cap in force, in cores (-1: uncapped); p.mu held.
func (p *Parent) cores() float64 {
	switch {
	case p.quota > 0:
		return float64(p.quota) / float64(p.period)
	case p.cpuset != "" && len(p.cpus) < len(p.allowed):
		return float64(len(p.cpus))
	}
	return -1
}

// CapMethod is how the parent enforces the cap (CapQuota where the host
// has no cpuset controller).
func (p *Parent) CapMethod() CapMethod { return p.method }

// Close removes the parent if it is empty, and leaves it (capped as it is)
// if tasks still run in it: a restarted driver takes it over.
func (p *Parent) Close() error {
	var errs []error
	dirs := p.Dirs()
	if p.v == V1 && p.cpuset != "" {
		dirs = append(dirs, p.cpuset)
	}
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeFile writes value to an existing file (never creating it), appending
// for cgroup.procs so that a fake tree keeps every pid written.
func writeFile(path, value string, appendIt bool) error {
	flags := os.O_WRONLY | os.O_TRUNC
	if appendIt {
		flags = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
