package hostsweep

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CgroupRoot is where the cgroup hierarchies are mounted.
const CgroupRoot = "/sys/fs/cgroup"

// CgroupV2 reports whether the host runs the unified cgroup hierarchy only.
func CgroupV2() bool {
	_, err := os.Stat(filepath.Join(CgroupRoot, "cgroup.controllers"))
	return err == nil
}

// CgroupDirs lists the directories of a cgroup_parent in every hierarchy.
func CgroupDirs(parent string) []string {
	rel := strings.TrimPrefix(parent, "/")
	if rel == "" {
		return nil
	}
	if CgroupV2() {
		return []string{filepath.Join(CgroupRoot, rel)}
	}
	ctrls, _ := os.ReadDir(CgroupRoot)
	var out []string
	for _, c := range ctrls {
		dir := filepath.Join(CgroupRoot, c.Name(), rel)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			out = append(out, dir)
		}
	}
	return out
}

// RemoveSharedNomadCgroups removes the /nomad cgroups (and cpuset's
// reserve/share partitions) that Nomad clients on cgroup v1 create and share.
// rmdir only removes an empty cgroup, so one still in use stays.
//
// A Nomad agent still running on the machine keeps them: a cluster whose
// claims live elsewhere (a test's temporary claim folder) would otherwise
// take the cpuset partitions from under it while they are empty between
// allocations, and its clients fail every allocation's setup after that
// ("cpuparts_hook ... unable to update share cpuset", seen in a two-hour
// testbed beside a unit test run).
func RemoveSharedNomadCgroups() {
	if CgroupV2() || NomadAgentRunning() {
		return
	}
	ctrls, _ := os.ReadDir(CgroupRoot)
	for _, c := range ctrls {
		base := filepath.Join(CgroupRoot, c.Name(), "nomad")
		for _, d := range []string{filepath.Join(base, "reserve"), filepath.Join(base, "share"), base} {
			_ = syscall.Rmdir(d)
		}
	}
}

// RemoveCgroup kills every process in the cgroup tree at dir and removes its
// directories, deepest first.
func RemoveCgroup(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		for _, pid := range cgroupPIDs(d) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	var last error
	for _, d := range dirs {
		for try := 0; try < 50; try++ {
			if last = syscall.Rmdir(d); last == nil || os.IsNotExist(last) {
				last = nil
				break
			}
			time.Sleep(100 * time.Millisecond) // killed tasks take a moment to leave
		}
	}
	return last
}

func cgroupPIDs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// NomadAgentRunning reports whether any `nomad agent` process runs on the
// machine.
func NomadAgentRunning() bool {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 1 && filepath.Base(args[0]) == "nomad" && args[1] == "agent" {
			return true
		}
	}
	return false
}
