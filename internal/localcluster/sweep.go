package localcluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The sweep removes what the agents leave behind when they die without
// cleaning up: task processes, mounts under the run folder, and the cgroups
// under each client's cgroup_parent.

const cgroupRoot = "/sys/fs/cgroup"

// cgroupV2 reports whether the host runs the unified cgroup hierarchy only.
func cgroupV2() bool {
	_, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	return err == nil
}

// cgroupParentFor names a client's cgroup_parent so that clients (and
// clusters) never share one.
func cgroupParentFor(base int, node string) string {
	name := fmt.Sprintf("harvest-%d-%s", base, node)
	if cgroupV2() {
		return name + ".slice"
	}
	return "/" + name
}

// cgroupDirs lists the directories of a cgroup_parent in every hierarchy.
func cgroupDirs(parent string) []string {
	rel := strings.TrimPrefix(parent, "/")
	if rel == "" {
		return nil
	}
	if cgroupV2() {
		return []string{filepath.Join(cgroupRoot, rel)}
	}
	ctrls, _ := os.ReadDir(cgroupRoot)
	var out []string
	for _, c := range ctrls {
		dir := filepath.Join(cgroupRoot, c.Name(), rel)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			out = append(out, dir)
		}
	}
	return out
}

// allocCgroupDirs lists the task cgroups of the cluster's allocations. On
// cgroup v1 Nomad 1.11 puts every client's tasks under /nomad whatever its
// cgroup_parent says, so they are found by allocation ID (the clients' alloc
// folders name them), never by sweeping /nomad as a whole.
func allocCgroupDirs(s *State) []string {
	var roots []string
	if cgroupV2() {
		roots = []string{cgroupRoot}
	} else {
		ctrls, _ := os.ReadDir(cgroupRoot)
		for _, c := range ctrls {
			roots = append(roots, filepath.Join(cgroupRoot, c.Name()))
		}
	}
	var out []string
	for _, c := range s.NomadClients {
		allocs, _ := os.ReadDir(filepath.Join(c.Dir, "data", "alloc"))
		parents := []string{"nomad", "nomad.slice", strings.TrimPrefix(c.CgroupParent, "/")}
		for _, a := range allocs {
			for _, root := range roots {
				for _, parent := range parents {
					for _, pattern := range []string{"%s/%s/%s.*", "%s/%s/*/%s.*"} {
						m, _ := filepath.Glob(fmt.Sprintf(pattern, root, parent, a.Name()))
						out = append(out, m...)
					}
				}
			}
		}
	}
	return out
}

// removeSharedNomadCgroups removes the /nomad cgroups (and cpuset's
// reserve/share partitions) that Nomad clients on cgroup v1 create and share.
// rmdir only removes an empty cgroup, so one still in use stays.
//
// A Nomad agent still running on the machine keeps them: a cluster whose
// claims live elsewhere (a test's temporary claim folder) would otherwise
// take the cpuset partitions from under it while they are empty between
// allocations, and its clients fail every allocation's setup after that
// ("cpuparts_hook ... unable to update share cpuset", seen in a two-hour
// testbed beside a unit test run).
func removeSharedNomadCgroups() {
	if cgroupV2() || nomadAgentRunning() {
		return
	}
	ctrls, _ := os.ReadDir(cgroupRoot)
	for _, c := range ctrls {
		base := filepath.Join(cgroupRoot, c.Name(), "nomad")
		for _, d := range []string{filepath.Join(base, "reserve"), filepath.Join(base, "share"), base} {
			_ = syscall.Rmdir(d)
		}
	}
}

// sweepCgroup kills every process in the cgroup tree at dir and removes its
// directories, deepest first.
func sweepCgroup(dir string) error {
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

// mountsUnder lists mount points under dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unmountAll(dir string) error {
	var last error
	for _, mp := range mountsUnder(dir) {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !os.IsNotExist(err) {
			last = fmt.Errorf("unmount %s: %w", mp, err)
		}
	}
	return last
}

// strayPIDs lists processes that belong to the run folder: their working
// directory or executable is inside it, or they are one of the stack's
// binaries with the run folder on their command line (Nomad's executors
// and logmon). This process is never listed.
func strayPIDs(roots []string, stackBinaries []string) []int {
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	inRun := func(p string) bool {
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !alive(pid, "") {
			continue
		}
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		exe = strings.TrimSuffix(exe, " (deleted)")
		if inRun(cwd) || inRun(exe) {
			out = append(out, pid)
			continue
		}
		for _, bin := range stackBinaries {
			if exe == bin || sameFile(exe, bin) {
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				for _, r := range roots {
					if strings.Contains(string(cmdline), r+"/") {
						out = append(out, pid)
						break
					}
				}
				break
			}
		}
	}
	return out
}

// Leftovers lists what of the cluster still exists on the machine: live
// pids it started, stray processes, mounts and cgroups. Empty after Down.
func Leftovers(s *State) []string {
	var out []string
	for _, a := range s.agents() {
		if alive(a.PID, a.Binary) {
			out = append(out, fmt.Sprintf("process %s (pid %d)", a.Name, a.PID))
		}
	}
	for _, pid := range strayPIDs(s.roots(), s.stackBinaries()) {
		out = append(out, fmt.Sprintf("stray process pid %d", pid))
	}
	for _, root := range s.roots() {
		for _, mp := range mountsUnder(root) {
			out = append(out, "mount "+mp)
		}
	}
	for _, d := range s.cgroups() {
		out = append(out, "cgroup "+d)
	}
	return out
}

// cgroups lists the cgroup directories the cluster's clients and tasks have.
func (s *State) cgroups() []string {
	out := allocCgroupDirs(s)
	for _, c := range s.NomadClients {
		out = append(out, cgroupDirs(c.CgroupParent)...)
		out = append(out, primaryCgroupDirs(c.PrimaryCgroup, false)...)
		out = append(out, harvestCgroupDirs(c.HarvestCgroup)...)
	}
	return out
}

func (s *State) stackBinaries() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range s.agents() {
		if a.Binary != "" && !seen[a.Binary] {
			seen[a.Binary] = true
			out = append(out, a.Binary)
		}
	}
	return out
}

// nomadAgentRunning reports whether any `nomad agent` process runs on the
// machine.
func nomadAgentRunning() bool {
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
