package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/command"
)

// JobExplanation is what `harvestctl explain job` says of a job: the
// decision the admission proxy kept when it registered the job (Algorithm
// 1's inputs and every class it weighed), the placement the job carries now
// (classes, escalation, partition, greylist rules), and its allocations.
type JobExplanation struct {
	Namespace string        `json:"namespace"`
	Job       string        `json:"job"`
	Decision  *api.Decision `json:"decision,omitempty"`
	// Meta is the job's harvest_* meta as Nomad holds it now.
	Meta map[string]string `json:"meta"`
	// Rules are the job's and its groups' constraints and affinities on
	// Harvest's node meta.
	Rules  []string       `json:"rules"`
	Allocs []AllocOutcome `json:"allocations"`
	Notes  []string       `json:"notes,omitempty"`
}

// AllocOutcome is one allocation of the job, in short.
type AllocOutcome struct {
	ID      string `json:"id"`
	Group   string `json:"group"`
	Node    string `json:"node"`
	Status  string `json:"client_status"`
	Evicted bool   `json:"evicted"`
}

// explainJob gathers the explanation of a job from Consul KV and Nomad.
func explainJob(ctx context.Context, nomad *nomadapi.Client, store *history.Store, namespace, jobID string) (*JobExplanation, error) {
	e := &JobExplanation{Namespace: namespace, Job: jobID, Meta: map[string]string{}}
	var d api.Decision
	ok, err := store.GetDocument(ctx, contract.DecisionDocument(namespace, jobID), &d)
	if err != nil {
		return nil, fmt.Errorf("reading the job's decision from Consul: %w", err)
	}
	if ok {
		e.Decision = &d
	} else {
		e.Notes = append(e.Notes, "no admission decision kept: the job was not registered through Harvest's admission proxy (or was registered before it kept decisions)")
	}
	q := (&nomadapi.QueryOptions{Namespace: namespace}).WithContext(ctx)
	job, _, err := nomad.Jobs().Info(jobID, q)
	if err != nil {
		if !ok {
			return nil, fmt.Errorf("job %s/%s: %w", namespace, jobID, err)
		}
		e.Notes = append(e.Notes, "Nomad no longer has the job: "+err.Error())
		return e, nil
	}
	for k, v := range job.Meta {
		if strings.HasPrefix(k, "harvest") {
			e.Meta[k] = v
		}
	}
	e.Rules = append(e.Rules, harvestRules("job", job.Constraints, job.Affinities)...)
	for _, g := range job.TaskGroups {
		e.Rules = append(e.Rules, harvestRules("group "+deref(g.Name), g.Constraints, g.Affinities)...)
	}
	stubs, _, err := nomad.Jobs().Allocations(jobID, true, q)
	if err != nil {
		return nil, err
	}
	for _, s := range stubs {
		e.Allocs = append(e.Allocs, AllocOutcome{ID: s.ID, Group: s.TaskGroup, Node: s.NodeName, Status: s.ClientStatus, Evicted: stubEvicted(s)})
	}
	sort.Slice(e.Allocs, func(i, j int) bool { return e.Allocs[i].Group+e.Allocs[i].ID < e.Allocs[j].Group+e.Allocs[j].ID })
	return e, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// harvestRules are the constraints and affinities on Harvest's node meta
// (${meta.harvest_*}), as "where: attribute operator value".
func harvestRules(where string, cs []*nomadapi.Constraint, as []*nomadapi.Affinity) []string {
	var out []string
	for _, c := range cs {
		if strings.Contains(c.LTarget, "harvest_") {
			out = append(out, fmt.Sprintf("%s: constraint %s %s %q", where, c.LTarget, c.Operand, c.RTarget))
		}
	}
	for _, a := range as {
		if strings.Contains(a.LTarget, "harvest_") {
			w := 0
			if a.Weight != nil {
				w = int(*a.Weight)
			}
			out = append(out, fmt.Sprintf("%s: affinity %s %s %q weight %d", where, a.LTarget, a.Operand, a.RTarget, w))
		}
	}
	return out
}

// stubEvicted says whether the harvest driver evicted a task of the
// allocation (its event carries harvest.evicted).
func stubEvicted(s *nomadapi.AllocationListStub) bool {
	for _, st := range s.TaskStates {
		for _, ev := range st.Events {
			if contract.IsEviction(ev.Details) {
				return true
			}
		}
	}
	return false
}

// printJobExplanation writes the explanation for people, or as JSON.
func printJobExplanation(w io.Writer, e *JobExplanation, asJSON bool) error {
	if asJSON {
		return command.PrintJSON(w, e)
	}
	fmt.Fprintf(w, "Job %s/%s\n", e.Namespace, e.Job)
	if d := e.Decision; d != nil {
		fmt.Fprintf(w, "Admitted %s through the proxy.\n", d.At.UTC().Format("2006-01-02 15:04:05 MST"))
		expected := "unknown (no earlier run, no harvest_expected meta)"
		if d.Known {
			expected = d.Expected.String()
		}
		fmt.Fprintf(w, "Type: %s (expected length %s; short below %s, long above %s; Algorithm 1 line 3)\n",
			d.JobType, expected, d.Thresholds.Short, d.Thresholds.Long)
		p := d.Estimate.Peak
		fmt.Fprintf(w, "Peak concurrency: %d tasks, %d MHz, %d MB (stages that run together: %s)\n", p.Tasks, p.CPU, p.MemoryMB, levels(d.Estimate.Levels))
		fmt.Fprintf(w, "Algorithm 1: fit %s, classes [%s]: %s\n", d.Outcome.Fit, strings.Join(d.Outcome.Classes, " "), d.Outcome.Reason)
		if len(d.Outcome.Considered) > 0 {
			chosen := map[string]bool{}
			for _, c := range d.Outcome.Classes {
				chosen[c] = true
			}
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  CLASS\tPATTERN\tROOM MHz\tROOM MB\tWEIGHT\tWEIGHTED ROOM\tFITS ALONE\tCHOSEN")
			for _, c := range d.Outcome.Considered {
				fmt.Fprintf(tw, "  %s\t%s\t%.0f\t%.0f\t%.2f\t%.0f\t%v\t%v\n", c.Class, c.Pattern, c.RoomCPU, c.RoomMemoryMB, c.Weight, c.WeightedRoom, c.Fits, chosen[c.Class])
			}
			tw.Flush()
		}
		if len(d.Deferred) > 0 {
			fmt.Fprintf(w, "Deferred stages (run as stage jobs once their inputs finish): %v\n", d.Deferred)
		}
	}
	if len(e.Meta) > 0 {
		keys := make([]string, 0, len(e.Meta))
		for k := range e.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintln(w, "Job meta now:")
		for _, k := range keys {
			fmt.Fprintf(w, "  %s = %s\n", k, e.Meta[k])
		}
	}
	if len(e.Rules) > 0 {
		fmt.Fprintln(w, "Placement rules on Harvest's node meta (classes, escalation, partition, greylist, packing):")
		for _, r := range e.Rules {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
	if len(e.Allocs) > 0 {
		fmt.Fprintln(w, "Allocations:")
		for _, a := range e.Allocs {
			ev := ""
			if a.Evicted {
				ev = "  evicted by the harvest driver: harvestctl explain alloc " + a.ID[:8]
			}
			fmt.Fprintf(w, "  %s  %-10s %-10s %s%s\n", a.ID[:8], a.Group, a.Node, a.Status, ev)
		}
	}
	for _, n := range e.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	return nil
}

func levels(ls [][]string) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = "[" + strings.Join(l, " ") + "]"
	}
	return strings.Join(parts, " then ")
}
