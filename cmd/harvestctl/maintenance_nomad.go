package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
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

// planProfile is "yesterday": every rule's workload over the profile
// window, and the threshold the urgency picks from it.
type planProfile struct {
	from, to   time.Time
	step       time.Duration
	urgency    int
	runs, jobs int       // that ran in the window
	oldest     time.Time // the oldest run Nomad still holds
	values     map[string][]float64
	threshold  map[string]float64
}

func newPlanProfile(runs []maintenance.Alloc, from, to time.Time, step time.Duration, urgency int) (*planProfile, error) {
	p := &planProfile{from: from, to: to, step: step, urgency: urgency,
		values: map[string][]float64{}, threshold: map[string]float64{}}
	p.runs, p.jobs = maintenance.Ran(runs, from, to)
	if p.runs == 0 {
		return nil, fmt.Errorf("nothing ran in the last %s: Nomad holds no batch allocation that ran then (it garbage-collects finished ones), so there is no workload to profile; run batch work first, or profile a longer -profile-window if older work is still held", to.Sub(from))
	}
	for _, r := range runs {
		if p.oldest.IsZero() || r.Start.Before(p.oldest) {
			p.oldest = r.Start
		}
	}
	for _, r := range planRules {
		p.values[r.name] = maintenance.Profile(runs, r.metric, from, to, step)
	}
	if slices.Max(p.values["cl"]) == 0 {
		return nil, fmt.Errorf("the %d batch task runs of the last %s all fell between the profile's samples, every %s: use a shorter -step, or a shorter -profile-window around them",
			p.runs, to.Sub(from), step)
	}
	for _, r := range planRules {
		th, err := maintenance.Threshold(p.values[r.name], urgency)
		if err != nil {
			return nil, err
		}
		p.threshold[r.name] = th
	}
	return p, nil
}

// print shows the profile's percentiles for every rule and the chosen
// rule's threshold, with the other's for comparison.
func (p *planProfile) print(w io.Writer, chosen planRule) {
	n := len(p.values[chosen.name])
	fmt.Fprintf(w, "Profile of the last %s of batch work (%s to %s, every %s: %d samples): %d task runs of %d jobs\n",
		p.to.Sub(p.from), p.from.UTC().Format(time.RFC3339), p.to.UTC().Format(time.RFC3339), p.step, n, p.runs, p.jobs)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "RULE\tUNIT\tMIN\tP1\tP5\tP10\tP20\tP50\tMAX\tTHRESHOLD (P%d)\t\n", p.urgency)
	for _, r := range planRules {
		v := p.values[r.name]
		fmt.Fprintf(tw, "%s\t%s\t%.0f", r.name, r.unit, slices.Min(v))
		for _, pc := range []int{1, 5, 10, 20, 50} {
			th, _ := maintenance.Threshold(v, pc)
			fmt.Fprintf(tw, "\t%.0f", th)
		}
		fmt.Fprintf(tw, "\t%.0f\t%.0f\t\n", slices.Max(v), p.threshold[r.name])
	}
	tw.Flush()
	for _, r := range planRules {
		role := "chosen"
		if r.name != chosen.name {
			role = "for comparison"
		}
		fmt.Fprintf(w, "Urgency %d: by %s (%s, %s), start when it is at or below %.0f %s\n",
			p.urgency, r.what, r.name, role, p.threshold[r.name], r.unit)
	}
	if gap := p.oldest.Sub(p.from); gap > p.to.Sub(p.from)/10 {
		fmt.Fprintf(w, "Note: the oldest run Nomad still holds started %s after the window began; the profile counts the time before as idle (a shorter -profile-window leaves it out)\n",
			gap.Round(time.Second))
	}
}
