// Package hostsweep finds and removes what processes leave on the host when
// they die without cleaning up: processes working in a folder, mounts under
// it, cgroup trees, and Nomad's shared cgroups on cgroup v1. It is the
// local cluster's teardown, free of the cluster's own state.
package hostsweep

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/harvest-platform/harvest/internal/proc"
)

// Alive reports whether pid runs binary and is not a zombie, so a pid reused
// by another program is never mistaken for ours. A process that is exiting
// has no exe link any more; its command name still identifies it.
func Alive(pid int, binary string) bool {
	comm, running := proc.Stat(pid)
	if !running {
		return false
	}
	if binary == "" {
		return true
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		return strings.TrimSuffix(exe, " (deleted)") == binary || sameFile(exe, binary)
	}
	base := filepath.Base(binary)
	return comm == base || (len(base) > 15 && comm == base[:15])
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// StrayPIDs lists processes that belong to the run folder: their working
// directory or executable is inside it, or they are one of the stack's
// binaries with the run folder on their command line (Nomad's executors
// and logmon). This process is never listed.
func StrayPIDs(roots []string, stackBinaries []string) []int {
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
		if err != nil || pid == self || !Alive(pid, "") {
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
