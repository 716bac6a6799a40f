package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harvest-platform/harvest/internal/hostsweep"
)

// The sweep removes what the agents leave behind when they die without
// cleaning up: task processes, mounts under the run folder, and the cgroups
// under each client's cgroup_parent.

// cgroupParentFor names a client's cgroup_parent so that clients (and
// clusters) never share one.
func cgroupParentFor(base int, node string) string {
	name := fmt.Sprintf("harvest-%d-%s", base, node)
	if hostsweep.CgroupV2() {
		return name + ".slice"
	}
	return "/" + name
}

// allocCgroupDirs lists the task cgroups of the cluster's allocations. On
// cgroup v1 Nomad 1.11 puts every client's tasks under /nomad whatever its
// cgroup_parent says, so they are found by allocation ID (the clients' alloc
// folders name them), never by sweeping /nomad as a whole.
func allocCgroupDirs(s *State) []string {
	var roots []string
	if hostsweep.CgroupV2() {
		roots = []string{hostsweep.CgroupRoot}
	} else {
		ctrls, _ := os.ReadDir(hostsweep.CgroupRoot)
		for _, c := range ctrls {
			roots = append(roots, filepath.Join(hostsweep.CgroupRoot, c.Name()))
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

// Leftovers lists what of the cluster still exists on the machine: live
// pids it started, stray processes, mounts and cgroups. Empty after Down.
func Leftovers(s *State) []string {
	var out []string
	for _, a := range s.agents() {
		if hostsweep.Alive(a.PID, a.Binary) {
			out = append(out, fmt.Sprintf("process %s (pid %d)", a.Name, a.PID))
		}
	}
	for _, pid := range hostsweep.StrayPIDs(s.roots(), s.stackBinaries()) {
		out = append(out, fmt.Sprintf("stray process pid %d", pid))
	}
	for _, root := range s.roots() {
		for _, mp := range hostsweep.MountsUnder(root) {
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
		out = append(out, hostsweep.CgroupDirs(c.CgroupParent)...)
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
