package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/harvest-platform/harvest/internal/hostsweep"
)

// Every Nomad client of the local cluster stands for a server whose own
// workload (its primary tenant) runs in a cgroup of its own, which the
// node's harvest driver watches. On one machine that cgroup is all there is
// of the primary tenant until a test starts a process in it.

// primaryControllers are the cgroup v1 hierarchies the driver reads.
var primaryControllers = []string{"cpuacct", "memory"}

func primaryCgroupFor(base int, node string) string {
	return fmt.Sprintf("/harvest-%d-%s-primary", base, node)
}

// harvestCgroupFor names a node's harvest_cgroup: a sibling of its primary
// cgroup at the top of each hierarchy, as on a real server.
func harvestCgroupFor(base int, node string) string {
	return fmt.Sprintf("/harvest-%d-%s-harvested", base, node)
}

// harvestControllers are the cgroup v1 hierarchies the driver puts
// harvested tasks in.
var harvestControllers = []string{"cpu", "cpuacct", "blkio", "cpuset"}

// harvestCgroupDirs are the existing directories of a harvest cgroup.
func harvestCgroupDirs(path string) []string {
	rel := strings.TrimPrefix(path, "/")
	if rel == "" {
		return nil
	}
	dirs := []string{filepath.Join(hostsweep.CgroupRoot, rel)}
	if !hostsweep.CgroupV2() {
		dirs = dirs[:0]
		for _, c := range harvestControllers {
			dirs = append(dirs, filepath.Join(hostsweep.CgroupRoot, c, rel))
		}
	}
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

func makePrimaryCgroup(path string) error {
	for _, d := range primaryCgroupDirs(path, true) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// primaryCgroupDirs are the directories of a primary cgroup (existing ones
// unless all is set).
func primaryCgroupDirs(path string, all bool) []string {
	rel := strings.TrimPrefix(path, "/")
	if rel == "" {
		return nil
	}
	var dirs []string
	if hostsweep.CgroupV2() {
		dirs = []string{filepath.Join(hostsweep.CgroupRoot, rel)}
	} else {
		for _, c := range primaryControllers {
			dirs = append(dirs, filepath.Join(hostsweep.CgroupRoot, c, rel))
		}
	}
	if all {
		return dirs
	}
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// JoinPrimary moves a process into a node's primary-tenant cgroup: from
// then on the node's harvest driver counts its CPU and memory as the
// primary tenant's.
func (s *State) JoinPrimary(node string, pid int) error {
	for _, c := range s.NomadClients {
		if c.Name != node {
			continue
		}
		dirs := primaryCgroupDirs(c.PrimaryCgroup, false)
		if len(dirs) == 0 {
			return fmt.Errorf("node %s has no primary cgroup", node)
		}
		for _, d := range dirs {
			if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("no node %s", node)
}

// Restart starts a stopped agent again with its arguments, for tests that
// stop a part of the cluster (Consul, say) and need it back.
func (s *State) Restart(name string) error {
	for _, a := range s.agents() {
		if a.Name != name {
			continue
		}
		if hostsweep.Alive(a.PID, a.Binary) {
			return fmt.Errorf("%s is running", name)
		}
		if err := startAgent(a, agentEnv(a.Env...), s.Owner == 0, a.Args...); err != nil {
			return err
		}
		return s.save()
	}
	return errors.New("no agent named " + name)
}

// Stop stops one agent of the cluster (SIGTERM, then SIGKILL).
func (s *State) Stop(name string) error {
	for _, a := range s.agents() {
		if a.Name == name {
			if !stopPID(a.PID, a.Binary, agentGrace) {
				return fmt.Errorf("%s (pid %d) did not stop", name, a.PID)
			}
			return nil
		}
	}
	return errors.New("no agent named " + name)
}
