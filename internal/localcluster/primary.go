package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/harvest-platform/harvest/internal/hostsweep"
	"github.com/harvest-platform/harvest/internal/localcluster/nodecgroup"
)

// JoinPrimary moves a process into a node's primary-tenant cgroup: from
// then on the node's harvest driver counts its CPU and memory as the
// primary tenant's.
func (s *State) JoinPrimary(node string, pid int) error {
	for _, c := range s.NomadClients {
		if c.Name != node {
			continue
		}
		dirs := nodecgroup.PrimaryDirs(c.PrimaryCgroup)
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
