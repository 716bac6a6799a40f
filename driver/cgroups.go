package driver

// The harvested tasks' parent cgroup (driver/harvestcg): harvest_cgroup,
// by default /harvest at the top of each hierarchy, where it competes with
// the primary tenant's cgroups at the lowest CPU weight (SCHED_IDLE too with
// cpu_idle where the kernel has cpu.idle), and enforces the cap the guard
// loop sets every tick: as whole CPUs of its cpuset (cap_method "cpuset":
// one CPU below that, and the least CFS quota at 0) or as a CFS quota
// ("quota").
//
// cgroup v1: Nomad's executor starts the task in its own freezer, cpu and
// memory cgroups (limits, stats and kill stay Nomad's); right after the
// start the driver moves the task's processes into <harvest_cgroup>/<alloc
// id>.<task> of the cpu (and cpuacct, blkio) hierarchies, where its children
// follow it. A task that cannot be moved is stopped and its start refused.
// cgroup v2: the executor starts the task in <harvest_cgroup>/<alloc
// id>.<task>.scope (its cgroup override), writing the task's memory.max and
// cpu.weight there.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client/lib/cgroupslib"
	"github.com/hashicorp/nomad/drivers/shared/executor"
	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/internal/proc"
)

// cgroupRoot is where the hierarchies are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// openCgroup opens the parent s asks for (nil for none), reusing the open
// one when the path is the same.
func (d *Driver) openCgroup(s settings) (*harvestcg.Parent, error) {
	if s.harvestCgroup == "" {
		return nil, nil
	}
	d.mu.Lock()
	cur, same := d.cgroup, d.settings.harvestCgroup == s.harvestCgroup && d.settings.cpuIdle == s.cpuIdle && d.settings.capMethod == s.capMethod
	d.mu.Unlock()
	if cur != nil && same {
		return cur, nil
	}
	p, err := harvestcg.Open(harvestcg.Options{Root: cgroupRoot, Path: s.harvestCgroup, Idle: s.cpuIdle, Cap: s.capMethod})
	if err != nil {
		return nil, err
	}
	d.logger.Info("harvest cgroup ready", "cgroup", s.harvestCgroup, "version", p.Version().String(), "settings", p.Settings())
	return p, nil
}

// harvestCgroup is the open parent (nil for none).
func (d *Driver) harvestCgroup() *harvestcg.Parent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cgroup
}

// cgroupAttr says where harvested tasks run, for the fingerprint; d.mu held.
func (d *Driver) cgroupAttr() string {
	if d.cgroup == nil {
		return noCgroup
	}
	return d.cgroup.Version().String() + ":" + d.settings.harvestCgroup
}

// cgroupName is a task's cgroup name under the parent: Nomad's own scope
// name (<alloc id>.<task>).
func cgroupName(cfg *drivers.TaskConfig) string { return cgroupslib.ScopeCG1(cfg.AllocID, cfg.Name) }

// prepareCgroup, before the start, points a v2 task's executor at its
// cgroup under the parent.
func prepareCgroup(p *harvestcg.Parent, cfg *drivers.TaskConfig, cmd *executor.ExecCommand) error {
	if p == nil || p.Version() != harvestcg.V2 {
		return nil
	}
	dir, err := p.TaskCgroupV2(cgroupName(cfg))
	if err != nil {
		return err
	}
	cmd.OverrideCgroupV2 = dir
	return nil
}

// adoptCgroup, right after the start, moves a v1 task's processes under
// the parent: those of the freezer cgroup Nomad's executor put them in, or
// the task's process pid (and so its later children) where there is none.
// A task whose process has already exited has nothing to move.
func adoptCgroup(p *harvestcg.Parent, cfg *drivers.TaskConfig, pid int) error {
	if p == nil || p.Version() != harvestcg.V1 {
		return nil
	}
	var shares int64
	if cfg.Resources != nil && cfg.Resources.LinuxResources != nil {
		shares = cfg.Resources.LinuxResources.CPUShares
	}
	procs := filepath.Join(cgroupslib.PathCG1(cfg.AllocID, cfg.Name, "freezer"), "cgroup.procs")
	pids := func() ([]int, error) {
		listed, err := harvestcg.ReadPIDs(procs)
		if errors.Is(err, os.ErrNotExist) {
			return []int{pid}, nil
		}
		return listed, err
	}
	n, err := p.Adopt(cgroupName(cfg), pids, shares)
	// an exited process (a zombie until the executor reaps it) has left its
	// cgroups: a task that ends at once, /bin/true say, is no failure
	if err == nil && n == 0 && proc.Running(pid) {
		err = fmt.Errorf("task process %d is not in %s", pid, procs)
	}
	return err
}

// releaseCgroup removes a task's cgroups under the parent (its processes
// are gone or going).
func releaseCgroup(p *harvestcg.Parent, cfg *drivers.TaskConfig, log hclog.Logger) {
	if p == nil {
		return
	}
	if err := p.Release(cgroupName(cfg)); err != nil {
		log.Warn("task cgroup not removed", "error", err)
	}
}

func formatCores(c float64) string { return strconv.FormatFloat(c, 'f', 2, 64) }
