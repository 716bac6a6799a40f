package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/hostsweep"
	"github.com/harvest-platform/harvest/internal/portclaim"
)

// agentGrace is how long an agent gets to exit after SIGTERM.
const agentGrace = 20 * time.Second

// Down tears the cluster down and leaves nothing running: it stops and
// purges every Nomad job (so clients stop their tasks and unmount their
// alloc dirs), stops the agents, sweeps stray tasks, mounts and cgroups,
// removes data (logs stay in RunDir/logs) and releases the port block. It
// returns an error listing anything it could not remove.
func Down(ctx context.Context, s *State, log hclog.Logger) error {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	stopDaemons(s, log)
	if hostsweep.Alive(s.NomadServer.PID, s.NomadServer.Binary) {
		if err := stopJobs(ctx, s, log); err != nil {
			log.Warn("could not stop every job; sweeping their tasks instead", "error", err)
		}
	}
	for _, tier := range s.stopTiers() {
		var wg sync.WaitGroup
		for _, a := range tier {
			if a.PID == 0 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if stopPID(a.PID, a.Binary, agentGrace) {
					log.Info("stopped", "part", a.Name, "pid", a.PID)
				} else {
					log.Error("could not stop", "part", a.Name, "pid", a.PID)
				}
			}()
		}
		wg.Wait()
	}
	sweep(s, log)
	var errs []error
	if left := Leftovers(s); len(left) > 0 {
		errs = append(errs, fmt.Errorf("left behind: %s", strings.Join(left, ", ")))
	} else {
		for _, a := range s.agents() {
			if a.Dir != "" {
				if err := os.RemoveAll(a.Dir); err != nil {
					errs = append(errs, err)
				}
			}
		}
		os.RemoveAll(s.PluginDir)
		os.RemoveAll(usagePluginDir(s))
		if s.ClientRoot != "" && s.ClientRoot != s.RunDir {
			if err := os.RemoveAll(s.ClientRoot); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if s.ClaimFile != "" {
		if err := os.Remove(s.ClaimFile); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
		if claims, err := portclaim.Read(filepath.Dir(s.ClaimFile)); err == nil && len(claims) == 0 {
			hostsweep.RemoveSharedNomadCgroups() // no other cluster on this machine uses them
		}
	}
	os.Remove(filepath.Join(s.RunDir, StateFile))
	return errors.Join(errs...)
}

// stopDaemons stops the Harvest daemons started beside the cluster (the
// demo's placer, say), which leave their pid in logs/harvest-NAME.pid, so
// that Down stops them first, politely.
func stopDaemons(s *State, log hclog.Logger) {
	files, _ := filepath.Glob(filepath.Join(s.RunDir, "logs", "harvest-*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(string(data), "%d", &pid); err != nil || !hostsweep.Alive(pid, "") {
			continue
		}
		// only a process working in the run folder is ours to stop
		if cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); cwd != s.RunDir && !strings.HasPrefix(cwd, s.RunDir+"/") {
			continue
		}
		if stopPID(pid, "", agentGrace) {
			log.Info("stopped", "part", strings.TrimSuffix(filepath.Base(f), ".pid"), "pid", pid)
		}
	}
}

// sweep kills stray processes (tasks, executors, plugins), then unmounts and
// removes cgroups, twice: a killed executor can leave a mount behind it.
func sweep(s *State, log hclog.Logger) {
	for round := 0; round < 2; round++ {
		for _, pid := range hostsweep.StrayPIDs(s.roots(), s.stackBinaries()) {
			log.Warn("killing stray process", "pid", pid)
			stopPID(pid, "", 5*time.Second)
		}
		for _, d := range s.cgroups() {
			if err := hostsweep.RemoveCgroup(d); err != nil {
				log.Warn("could not remove cgroup", "dir", d, "error", err)
			}
		}
		for _, root := range s.roots() {
			if err := hostsweep.UnmountAll(root); err != nil {
				log.Warn("unmount failed", "error", err)
			}
		}
	}
}

// nomadNoSuchAllocation starts the error of a client asked to collect an
// allocation it no longer holds (client/alloc_endpoint.go in Nomad 1.11.3).
const nomadNoSuchAllocation = "No such allocation on client"

// stopJobs stops every job in every namespace, waits for the allocations to
// stop, garbage-collects them on their clients (which unmounts their alloc
// dirs) and purges the jobs.
func stopJobs(ctx context.Context, s *State, log hclog.Logger) error {
	c, err := s.NomadClient()
	if err != nil {
		return err
	}
	all := &nomadapi.QueryOptions{Namespace: "*"}
	jobs, _, err := c.Jobs().List(all.WithContext(ctx))
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if _, _, err := c.Jobs().Deregister(j.ID, false, &nomadapi.WriteOptions{Namespace: j.Namespace}); err != nil {
			return fmt.Errorf("stop job %s: %w", j.ID, err)
		}
		log.Info("stopped job", "job", j.ID, "namespace", j.Namespace)
	}
	deadline := time.Now().Add(60 * time.Second)
	var allocs []*nomadapi.AllocationListStub
	for {
		allocs, _, err = c.Allocations().List(all)
		if err != nil {
			return err
		}
		running := 0
		for _, a := range allocs {
			if !terminal(a.ClientStatus) {
				running++
			}
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d allocations still running after 60s", running)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, a := range allocs {
		alloc := &nomadapi.Allocation{ID: a.ID, NodeID: a.NodeID, Namespace: a.Namespace}
		// The endpoint answers with an empty body, which the API client
		// reports as EOF after the collection has happened; an allocation
		// the client has collected already (its gc_max_allocs) is gone
		// from it, and every allocation here is terminal.
		err := c.Allocations().GC(alloc, &nomadapi.QueryOptions{Namespace: a.Namespace})
		switch {
		case err == nil || errors.Is(err, io.EOF):
		case strings.Contains(err.Error(), nomadNoSuchAllocation):
			log.Debug("alloc collected by its client already", "alloc", a.ID)
		default:
			log.Warn("alloc gc failed", "alloc", a.ID, "error", err)
		}
	}
	for _, j := range jobs {
		if _, _, err := c.Jobs().Deregister(j.ID, true, &nomadapi.WriteOptions{Namespace: j.Namespace}); err != nil {
			return fmt.Errorf("purge job %s: %w", j.ID, err)
		}
	}
	return nil
}

func terminal(clientStatus string) bool {
	switch clientStatus {
	case nomadapi.AllocClientStatusComplete, nomadapi.AllocClientStatusFailed, nomadapi.AllocClientStatusLost:
		return true
	}
	return false
}

// SweepStale tears down clusters whose claim is stale: the process that
// started them died (a killed test run), or nothing of them runs anymore.
func SweepStale(ctx context.Context, claimDir string, log hclog.Logger) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	claims, err := portclaim.Read(claimDir)
	if err != nil {
		return
	}
	for path, c := range claims {
		if c.Owner != 0 && hostsweep.Alive(c.Owner, "") {
			continue // its owner is alive and will tear it down
		}
		s, err := Load(c.RunDir)
		if err != nil {
			log.Info("removing stale port claim", "claim", path)
			os.Remove(path)
			continue
		}
		if c.Owner == 0 && len(Leftovers(s)) > 0 {
			continue // a detached cluster that still runs (make demo)
		}
		log.Warn("tearing down a cluster left by a dead run", "run_dir", c.RunDir)
		if err := Down(ctx, s, log); err != nil {
			log.Error("stale cluster not fully removed", "run_dir", c.RunDir, "error", err)
		}
	}
}
