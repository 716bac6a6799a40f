package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/maintenance"
)

// maintenanceNomad is what `maintenance plan` asks of Nomad: the batch
// allocations' runs, and draining nodes.
type maintenanceNomad struct {
	client *nomadapi.Client
	addr   string
}

func newMaintenanceNomad(addr string) (*maintenanceNomad, error) {
	cfg := nomadapi.DefaultConfig() // NOMAD_TOKEN, NOMAD_CACERT, ... as the nomad CLI reads them
	cfg.Address = addr
	c, err := nomadapi.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("nomad client for %s: %w", addr, err)
	}
	return &maintenanceNomad{client: c, addr: addr}, nil
}

// explain names Nomad's address in an error, and says what to do when it
// cannot be reached at all.
func (n *maintenanceNomad) explain(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("cannot reach Nomad at %s: %w (is it running? point -nomad-addr or NOMAD_ADDR at its HTTP API)", n.addr, err)
	}
	return fmt.Errorf("nomad at %s: %w", n.addr, err)
}

// batchRuns reads every namespace's allocations with their task states and
// allocated resources, and returns the batch ones' task runs.
func (n *maintenanceNomad) batchRuns(ctx context.Context) ([]maintenance.Alloc, error) {
	q := (&nomadapi.QueryOptions{
		Namespace: "*",
		Params:    map[string]string{"resources": "true", "task_states": "true"},
	}).WithContext(ctx)
	stubs, _, err := n.client.Allocations().List(q)
	if err != nil {
		return nil, n.explain(err)
	}
	return batchRuns(stubs), nil
}

// batchRuns turns Nomad's allocations into the runs maintenance weighs: one
// per task of a batch job's allocation that has started, from its latest
// start (a restart begins its work again) to when it finished, open while
// it runs, weighted by the CPU (MHz) Nomad allocated to the task. A task
// Nomad still calls running in an allocation the client has given up on
// (lost, failed, complete) ended when the allocation last changed.
func batchRuns(stubs []*nomadapi.AllocationListStub) []maintenance.Alloc {
	var out []maintenance.Alloc
	for _, s := range stubs {
		if s.JobType != nomadapi.JobTypeBatch {
			continue
		}
		terminal := s.ClientStatus == nomadapi.AllocClientStatusComplete ||
			s.ClientStatus == nomadapi.AllocClientStatusFailed || s.ClientStatus == nomadapi.AllocClientStatusLost
		for name, ts := range s.TaskStates {
			if ts == nil || ts.StartedAt.IsZero() {
				continue
			}
			run := maintenance.Alloc{Job: s.Namespace + "/" + s.JobID, Start: ts.StartedAt, CPU: taskCPU(s, name)}
			switch {
			case !ts.FinishedAt.IsZero():
				run.End = ts.FinishedAt
			case ts.State == taskStateRunning && !terminal:
				// still running: no end
			case ts.State == taskStatePending && !terminal:
				run.End = ts.LastRestart // waiting to restart: the run before ended
			default:
				run.End = time.Unix(0, s.ModifyTime)
			}
			if !run.End.IsZero() && !run.End.After(run.Start) {
				continue
			}
			out = append(out, run)
		}
	}
	slices.SortFunc(out, func(a, b maintenance.Alloc) int {
		return cmp.Or(a.Start.Compare(b.Start), strings.Compare(a.Job, b.Job))
	})
	return out
}

func taskCPU(s *nomadapi.AllocationListStub, task string) float64 {
	if s.AllocatedResources == nil || s.AllocatedResources.Tasks[task] == nil {
		return 0
	}
	return float64(s.AllocatedResources.Tasks[task].Cpu.CpuShares)
}

// Task states as Nomad reports them (its api package names no constants).
const (
	taskStateRunning = "running"
	taskStatePending = "pending"
)

// drainTarget is a node to drain.
type drainTarget struct{ ID, Name string }

// drainTargets resolves node names (or IDs) to drain; none names every node.
func (n *maintenanceNomad) drainTargets(ctx context.Context, names []string) ([]drainTarget, error) {
	stubs, _, err := n.client.Nodes().List((&nomadapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, n.explain(err)
	}
	var all []drainTarget
	var known []string
	for _, s := range stubs {
		all = append(all, drainTarget{ID: s.ID, Name: s.Name})
		known = append(known, s.Name)
	}
	if len(names) == 0 {
		if len(all) == 0 {
			return nil, fmt.Errorf("nomad at %s has no client nodes to drain", n.addr)
		}
		return all, nil
	}
	var out []drainTarget
	for _, name := range names {
		i := slices.IndexFunc(all, func(d drainTarget) bool { return d.Name == name || d.ID == name })
		if i < 0 {
			return nil, fmt.Errorf("-node %s: no such Nomad node (nodes: %s)", name, strings.Join(known, ", "))
		}
		if !slices.Contains(out, all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// drain starts draining a node with a deadline, which makes it ineligible
// for new work, checks that it is, and says what it did.
func (n *maintenanceNomad) drain(ctx context.Context, t drainTarget, deadline time.Duration, reason string) (string, error) {
	w := (&nomadapi.WriteOptions{}).WithContext(ctx)
	_, err := n.client.Nodes().UpdateDrainOpts(t.ID, &nomadapi.DrainOptions{
		DrainSpec: &nomadapi.DrainSpec{Deadline: deadline},
		Meta:      map[string]string{"message": "harvestctl maintenance plan: " + reason},
	}, w)
	if err != nil {
		return "", fmt.Errorf("drain node %s: %w", t.Name, n.explain(err))
	}
	node, _, err := n.client.Nodes().Info(t.ID, (&nomadapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("node %s after the drain request: %w", t.Name, n.explain(err))
	}
	if node.SchedulingEligibility != nomadapi.NodeSchedulingIneligible {
		if _, err := n.client.Nodes().ToggleEligibility(t.ID, false, w); err != nil {
			return "", fmt.Errorf("mark node %s ineligible: %w", t.Name, n.explain(err))
		}
	}
	return fmt.Sprintf("node %s (%s): draining, its allocations have %s to move before Nomad stops them; ineligible for new work",
		t.Name, shortID(t.ID), deadline), nil
}

func (c *planCommand) drainAll(ctx context.Context, src *maintenanceNomad, targets []drainTarget, deadline time.Duration, reason string) error {
	for i, t := range targets {
		msg, err := src.drain(ctx, t, deadline, reason)
		if err != nil {
			var done []string
			for _, d := range targets[:i] {
				done = append(done, d.Name)
			}
			return fmt.Errorf("%w (nodes drained before it: %d %v)", err, len(done), done)
		}
		fmt.Fprintln(c.out, msg)
	}
	return nil
}

func shortID(id string) string { return id[:min(8, len(id))] }
