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

	"github.com/harvest-platform/harvest/internal/connect"
	"github.com/harvest-platform/harvest/placer/maintenance"
)

// maintenanceNomad is what `maintenance plan` asks of Nomad: the batch
// allocations' runs, and draining nodes.
type maintenanceNomad struct {
	client *nomadapi.Client
	addr   string
}

func newMaintenanceNomad(addr string) (*maintenanceNomad, error) {
	// NOMAD_TOKEN, NOMAD_CACERT, ... as the nomad CLI reads them
	c, err := connect.Nomad{Address: addr}.Client()
	if err != nil {
		return nil, fmt.Errorf("nomad client for %s: %w", addr, err)
	}
	return &maintenanceNomad{client: c, addr: c.Address()}, nil
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

// liveAllocs filters Nomad's allocation listing down to the allocations
// that have not ended: all the watch needs, since the metrics at a moment
// count only the runs still running then, and batchRuns ends every task of
// an allocation in one of these terminal statuses. (Nomad evaluates the
// filter on its own Allocation, not on the list stub: JobType is no field
// of it, so the batch check stays in batchRuns.)
const liveAllocs = `ClientStatus != "complete" and ClientStatus != "failed" and ClientStatus != "lost"`

// batchRuns reads every namespace's allocations that match a filter (none:
// every allocation Nomad holds) with their task states and allocated
// resources, and returns the batch ones' task runs.
func (n *maintenanceNomad) batchRuns(ctx context.Context, filter string) ([]maintenance.Alloc, error) {
	q := (&nomadapi.QueryOptions{
		Namespace: "*",
		Filter:    filter,
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
	for _, s := range stubs {
		all = append(all, drainTarget{ID: s.ID, Name: s.Name})
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
			return nil, fmt.Errorf("-node %s: no such Nomad node (nodes: %s)", name, strings.Join(targetNames(all), ", "))
		}
		if !slices.Contains(out, all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// drainAll first makes every target ineligible, then drains each with the
// deadline, so that work moved off one target is not placed on another
// about to be drained (Nomad's advice when draining several nodes). Nomad
// keeps a drained node ineligible itself, so nothing is checked after.
func (c *planCommand) drainAll(ctx context.Context, src *maintenanceNomad, targets []drainTarget, deadline time.Duration, reason string) error {
	for i, t := range targets {
		if err := src.markIneligible(ctx, t); err != nil {
			return fmt.Errorf("%w (nothing drained; made ineligible before it: %v)", err, targetNames(targets[:i]))
		}
	}
	for i, t := range targets {
		if err := src.drain(ctx, t, deadline, reason); err != nil {
			return fmt.Errorf("%w (nodes drained before it: %d %v)", err, i, targetNames(targets[:i]))
		}
		fmt.Fprintf(c.out, "node %s (%s): draining, its allocations have %s to move before Nomad stops them; ineligible for new work\n",
			t.Name, shortID(t.ID), deadline)
	}
	return nil
}

func (n *maintenanceNomad) markIneligible(ctx context.Context, t drainTarget) error {
	if _, err := n.client.Nodes().ToggleEligibility(t.ID, false, (&nomadapi.WriteOptions{}).WithContext(ctx)); err != nil {
		return fmt.Errorf("mark node %s ineligible: %w", t.Name, n.explain(err))
	}
	return nil
}

// drain starts draining a node with a deadline.
func (n *maintenanceNomad) drain(ctx context.Context, t drainTarget, deadline time.Duration, reason string) error {
	_, err := n.client.Nodes().UpdateDrainOpts(t.ID, &nomadapi.DrainOptions{
		DrainSpec: &nomadapi.DrainSpec{Deadline: deadline},
		Meta:      map[string]string{"message": "harvestctl maintenance plan: " + reason},
	}, (&nomadapi.WriteOptions{}).WithContext(ctx))
	if err != nil {
		return fmt.Errorf("drain node %s: %w", t.Name, n.explain(err))
	}
	return nil
}

func targetNames(ts []drainTarget) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return names
}

func shortID(id string) string { return id[:min(8, len(id))] }
