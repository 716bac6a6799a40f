// Package nodecgroup owns the cgroups of a local cluster's Nomad client on
// the host: their names (the client's cgroup_parent, its primary tenant's
// cgroup and its harvest_cgroup, unique per port block and node so that
// clients and clusters never share one), making the primary's, and finding
// every directory they and the client's allocations have, for the sweep.
//
// Every Nomad client of the local cluster stands for a server whose own
// workload (its primary tenant) runs in a cgroup of its own, which the
// node's harvest driver watches. On one machine that cgroup is all there is
// of the primary tenant until a test starts a process in it.
package nodecgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harvest-platform/harvest/internal/hostsweep"
)

// Names are one client's cgroups, as its config and the driver's name them.
type Names struct {
	Parent    string // the client's cgroup_parent
	Primary   string // its primary tenant's cgroup, which the driver watches
	Harvested string // its harvest_cgroup: a sibling of Primary at the top of each hierarchy, as on a real server
}

// For names the cgroups of node in the cluster of port block base.
func For(base int, node string) Names {
	n := Names{
		Parent:    fmt.Sprintf("harvest-%d-%s", base, node),
		Primary:   fmt.Sprintf("/harvest-%d-%s-primary", base, node),
		Harvested: fmt.Sprintf("/harvest-%d-%s-harvested", base, node),
	}
	if hostsweep.CgroupV2() {
		n.Parent += ".slice"
	} else {
		n.Parent = "/" + n.Parent
	}
	return n
}

// primaryControllers are the cgroup v1 hierarchies the driver reads;
// harvestControllers those it puts harvested tasks in.
var (
	primaryControllers = []string{"cpuacct", "memory"}
	harvestControllers = []string{"cpu", "cpuacct", "blkio", "cpuset"}
)

// dirs are path's directories in each of the controllers' hierarchies (one
// on cgroup v2).
func dirs(path string, controllers []string) []string {
	rel := strings.TrimPrefix(path, "/")
	if rel == "" {
		return nil
	}
	if hostsweep.CgroupV2() {
		return []string{filepath.Join(hostsweep.CgroupRoot, rel)}
	}
	var out []string
	for _, c := range controllers {
		out = append(out, filepath.Join(hostsweep.CgroupRoot, c, rel))
	}
	return out
}

func existing(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// MakePrimary makes a primary cgroup's directories.
func MakePrimary(path string) error {
	for _, d := range dirs(path, primaryControllers) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// PrimaryDirs are the existing directories of a primary cgroup.
func PrimaryDirs(path string) []string { return existing(dirs(path, primaryControllers)) }

// HarvestedDirs are the existing directories of a harvest cgroup.
func HarvestedDirs(path string) []string { return existing(dirs(path, harvestControllers)) }

// AllocDirs lists the task cgroups of a client's allocations (clientDir is
// the client's folder, cgroupParent its cgroup_parent). On cgroup v1 Nomad
// 1.11 puts every client's tasks under /nomad whatever its cgroup_parent
// says, so they are found by allocation ID (the client's alloc folder names
// them), never by sweeping /nomad as a whole.
func AllocDirs(clientDir, cgroupParent string) []string {
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
	allocs, _ := os.ReadDir(filepath.Join(clientDir, "data", "alloc"))
	parents := []string{"nomad", "nomad.slice", strings.TrimPrefix(cgroupParent, "/")}
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
	return out
}
