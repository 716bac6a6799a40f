package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/command"
)

// AllocExplanation is what `harvestctl explain alloc` says of one
// allocation: its tasks' timelines and, for a task the harvest driver
// suppressed or evicted, the figures of the guard tick that decided it (the
// driver's task-event annotations, harvest.*).
type AllocExplanation struct {
	ID          string            `json:"id"`
	Namespace   string            `json:"namespace"`
	Job         string            `json:"job"`
	Group       string            `json:"group"`
	Node        string            `json:"node"`
	Status      string            `json:"client_status"`
	Tasks       []TaskExplanation `json:"tasks"`
	Verdict     string            `json:"verdict"` // evicted, suppressed, or what Nomad says
	Rescheduled string            `json:"rescheduled_to,omitempty"`
}

// TaskExplanation is one task of an allocation.
type TaskExplanation struct {
	Name     string          `json:"name"`
	State    string          `json:"state"`
	Failed   bool            `json:"failed"`
	Timeline []TimelineEvent `json:"timeline"`
	// Eviction and Suppression are the figures of the tick that evicted or
	// (first) suppressed the task, when the driver did.
	Eviction    map[string]string `json:"eviction,omitempty"`
	Suppression map[string]string `json:"suppression,omitempty"`
}

// TimelineEvent is one task event.
type TimelineEvent struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Message string    `json:"message"`
}

// explainAlloc reads an allocation by ID or unique ID prefix.
func explainAlloc(ctx context.Context, nomad *nomadapi.Client, id string) (*AllocExplanation, error) {
	q := (&nomadapi.QueryOptions{Namespace: "*"}).WithContext(ctx)
	full := id
	if len(id) < 36 {
		// Nomad matches the prefix; its UUID index takes an even number of
		// characters (the nomad CLI trims the same way), the rest is ours
		listed, _, err := nomad.Allocations().List((&nomadapi.QueryOptions{Namespace: "*", Prefix: id[:len(id)&^1]}).WithContext(ctx))
		if err != nil {
			return nil, err
		}
		stubs := slices.DeleteFunc(listed, func(s *nomadapi.AllocationListStub) bool { return !strings.HasPrefix(s.ID, id) })
		switch len(stubs) {
		case 0:
			return nil, fmt.Errorf("no allocation with ID prefix %q", id)
		case 1:
			full = stubs[0].ID
		default:
			var ids []string
			for _, s := range stubs {
				ids = append(ids, s.ID)
			}
			return nil, fmt.Errorf("allocation ID prefix %q is ambiguous: %s", id, strings.Join(ids, ", "))
		}
	}
	a, _, err := nomad.Allocations().Info(full, q)
	if err != nil {
		return nil, err
	}
	return allocExplanation(a), nil
}

// allocExplanation turns Nomad's allocation into the explanation.
func allocExplanation(a *nomadapi.Allocation) *AllocExplanation {
	ns := a.Namespace
	if ns == "" {
		ns = "default"
	}
	e := &AllocExplanation{ID: a.ID, Namespace: ns, Job: a.JobID, Group: a.TaskGroup, Node: a.NodeName,
		Status: a.ClientStatus, Verdict: a.ClientStatus, Rescheduled: a.NextAllocation}
	names := make([]string, 0, len(a.TaskStates))
	for n := range a.TaskStates {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st := a.TaskStates[n]
		t := TaskExplanation{Name: n, State: st.State, Failed: st.Failed}
		for _, ev := range st.Events {
			msg := ev.DisplayMessage
			if msg == "" {
				msg = ev.DriverMessage
			}
			t.Timeline = append(t.Timeline, TimelineEvent{Time: time.Unix(0, ev.Time).UTC(), Type: ev.Type, Message: msg})
			switch {
			case ev.Details[contract.AnnotationEvicted] == contract.AnnotationTrue:
				t.Eviction = harvestFigures(ev.Details)
			case ev.Details[contract.AnnotationSuppressed] == contract.AnnotationTrue && t.Suppression == nil:
				t.Suppression = harvestFigures(ev.Details)
			}
		}
		switch {
		case t.Eviction != nil:
			e.Verdict = "evicted by the harvest driver (" + t.Eviction["reason"] + ")"
		case t.Suppression != nil && e.Verdict == a.ClientStatus:
			e.Verdict = a.ClientStatus + ", suppressed by the harvest driver on the way"
		}
		e.Tasks = append(e.Tasks, t)
	}
	return e
}

// harvestFigures are an event's harvest.* annotations without the prefix.
func harvestFigures(details map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range details {
		if name, ok := strings.CutPrefix(k, "harvest."); ok {
			out[name] = v
		}
	}
	return out
}

// printAllocExplanation writes the explanation for people, or as JSON.
func printAllocExplanation(w io.Writer, e *AllocExplanation, asJSON bool) error {
	if asJSON {
		return command.PrintJSON(w, e)
	}
	fmt.Fprintf(w, "Allocation %s of job %s/%s, group %s, on %s: %s\n", e.ID[:min(8, len(e.ID))], e.Namespace, e.Job, e.Group, e.Node, e.Verdict)
	for _, t := range e.Tasks {
		fmt.Fprintf(w, "\nTask %s (%s)\n", t.Name, t.State)
		for _, ev := range t.Timeline {
			fmt.Fprintf(w, "  %s  %-18s %s\n", ev.Time.Format("15:04:05.000"), ev.Type, ev.Message)
		}
		if f := t.Suppression; f != nil {
			fmt.Fprintf(w, "  Suppressed: %s\n", describeTick(f))
		}
		if f := t.Eviction; f != nil {
			fmt.Fprintf(w, "  Evicted (%s): %s\n", f["reason"], describeTick(f))
			if v := f["victims"]; v != "" {
				fmt.Fprintf(w, "  Victims, youngest first: %s (this task: %s)\n", strings.ReplaceAll(v, ",", ", "), f["victim_rank"])
			}
			if s := f["task_started"]; s != "" {
				fmt.Fprintf(w, "  The task started %s", s)
				if since := f["suppressed_since"]; since != "" {
					fmt.Fprintf(w, "; suppression began %s", since)
				}
				fmt.Fprintln(w)
			}
		}
	}
	if e.Rescheduled != "" {
		fmt.Fprintf(w, "\nNomad replaced it with allocation %s: the work moved on.\n", e.Rescheduled[:min(8, len(e.Rescheduled))])
	}
	return nil
}

// describeTick is one line of a guard tick's figures.
func describeTick(f map[string]string) string {
	return fmt.Sprintf("primary %s cores measured (%s rounded up), %s MiB; reserve %s cores, %s MiB; capacity %s cores; harvested cap %s cores, need %s cores",
		f["primary_cores"], f["primary_rounded_cores"], f["primary_mib"], f["reserve_cores"], f["reserve_mib"],
		f["capacity_cores"], f["cap_cores"], f["need_cores"])
}
