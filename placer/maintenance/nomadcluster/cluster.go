// Package nomadcluster is maintenance's side of Nomad: it reads the batch
// allocations' task runs that placer/maintenance weighs, resolves the nodes
// to drain, and drains them, ineligible first. harvestctl's `maintenance
// plan` decides when; this package does what Nomad is asked.
package nomadcluster

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

// Cluster is a Nomad cluster as maintenance sees it.
type Cluster struct {
	client *nomadapi.Client
	addr   string
}

// Connect is a Cluster at addr (empty: NOMAD_ADDR, else Nomad's default),
// with NOMAD_TOKEN, NOMAD_CACERT, ... as the nomad CLI reads them.
func Connect(addr string) (*Cluster, error) {
	c, err := connect.Nomad{Address: addr}.Client()
	if err != nil {
		return nil, fmt.Errorf("nomad client for %s: %w", addr, err)
	}
	return &Cluster{client: c, addr: c.Address()}, nil
}

// explain names Nomad's address in an error, and says what to do when it
// cannot be reached at all.
func (c *Cluster) explain(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("cannot reach Nomad at %s: %w (is it running? point the address or NOMAD_ADDR at its HTTP API)", c.addr, err)
	}
	return fmt.Errorf("nomad at %s: %w", c.addr, err)
}

// LiveAllocs filters Nomad's allocation listing down to the allocations
// that have not ended: all a watch needs, since the metrics at a moment
// count only the runs still running then, and BatchRuns ends every task of
// an allocation in one of these terminal statuses. (Nomad evaluates the
// filter on its own Allocation, not on the list stub: JobType is no field
// of it, so the batch check stays in BatchRuns.)
const LiveAllocs = `ClientStatus != "complete" and ClientStatus != "failed" and ClientStatus != "lost"`

// BatchRuns reads every namespace's allocations that match a filter (none:
// every allocation Nomad holds) with their task states and allocated
// resources, and returns the batch ones' task runs.
func (c *Cluster) BatchRuns(ctx context.Context, filter string) ([]maintenance.Alloc, error) {
	q := (&nomadapi.QueryOptions{
		Namespace: "*",
		Filter:    filter,
		Params:    map[string]string{"resources": "true", "task_states": "true"},
	}).WithContext(ctx)
	stubs, _, err := c.client.Allocations().List(q)
	if err != nil {
		return nil, c.explain(err)
	}
	return BatchRuns(stubs), nil
}

// BatchRuns turns Nomad's allocations into the runs maintenance weighs: one
// per task of a batch job's allocation that has started, from its latest
// start (a restart begins its work again) to when it finished, open while
// it runs, weighted by the CPU (MHz) Nomad allocated to the task. A task
// Nomad still calls running in an allocation the client has given up on
// (lost, failed, complete) ended when the allocation last changed.
func BatchRuns(stubs []*nomadapi.AllocationListStub) []maintenance.Alloc {
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
