package localcluster

import (
	"fmt"

	"github.com/harvest-platform/harvest/internal/hostsweep"
	"github.com/harvest-platform/harvest/internal/localcluster/nodecgroup"
)

// The sweep removes what the agents leave behind when they die without
// cleaning up: task processes, mounts under the run folder, and the cgroups
// under each client's cgroup_parent.

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
	var out []string
	for _, c := range s.NomadClients {
		out = append(out, nodecgroup.AllocDirs(c.Dir, c.CgroupParent)...)
	}
	for _, c := range s.NomadClients {
		out = append(out, hostsweep.CgroupDirs(c.CgroupParent)...)
		out = append(out, nodecgroup.PrimaryDirs(c.PrimaryCgroup)...)
		out = append(out, nodecgroup.HarvestedDirs(c.HarvestCgroup)...)
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
