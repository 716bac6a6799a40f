package testbed

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	nomadapi "github.com/hashicorp/nomad/api"
)

// UnfinishedJob is a job of the stream not finished at the run's end as
// Nomad held it then: its DAG job and the stage jobs the sequencer
// registered for it ("<job>.<group>"), so a reader can tell a job waiting
// for room from one Nomad gave up on, or a stage never released.
type UnfinishedJob struct {
	ID     string          `json:"id"`
	Class  string          `json:"class"`
	Stages int             `json:"stages"`
	Nomad  []NomadJobAtEnd `json:"nomad_jobs"`
}

// NomadJobAtEnd is one Nomad job at the run's end.
type NomadJobAtEnd struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Stop   bool   `json:"stop,omitempty"`
	// Groups are the job summary's counts per group, as
	// "queued/starting/running/failed/lost/complete".
	Groups map[string]string `json:"groups"`
	// Evaluations counts the job's evaluations by status; Blocked says,
	// per group, why the newest blocked evaluation could not place it.
	Evaluations map[string]int    `json:"evaluations_by_status"`
	Blocked     map[string]string `json:"blocked,omitempty"`
}

// unfinishedJobs reads the unfinished jobs' Nomad jobs at the end; what
// cannot be read is said in place of a status (the report keeps the rest).
func unfinishedJobs(nomad *nomadapi.Client, jobs []*job) []UnfinishedJob {
	var out []UnfinishedJob
	for _, j := range jobs {
		u := UnfinishedJob{ID: j.ID, Class: j.Class, Stages: len(j.Stages)}
		stubs, _, err := nomad.Jobs().PrefixList(j.ID)
		if err != nil {
			u.Nomad = append(u.Nomad, NomadJobAtEnd{ID: j.ID, Status: "not read: " + err.Error()})
		}
		for _, s := range stubs {
			if s.ID != j.ID && !strings.HasPrefix(s.ID, j.ID+".") {
				continue
			}
			sum, _, sumErr := nomad.Jobs().Summary(s.ID, nil)
			evals, _, evalErr := nomad.Jobs().Evaluations(s.ID, nil)
			n := atEnd(s, sum, evals)
			if err := errors.Join(sumErr, evalErr); err != nil {
				n.Status += " (not all read: " + err.Error() + ")"
			}
			u.Nomad = append(u.Nomad, n)
		}
		out = append(out, u)
	}
	return out
}

// atEnd is a Nomad job's state from its list stub, summary and evaluations.
func atEnd(s *nomadapi.JobListStub, sum *nomadapi.JobSummary, evals []*nomadapi.Evaluation) NomadJobAtEnd {
	n := NomadJobAtEnd{ID: s.ID, Status: s.Status, Stop: s.Stop, Groups: map[string]string{}, Evaluations: map[string]int{}}
	if sum != nil {
		for g, c := range sum.Summary {
			n.Groups[g] = fmt.Sprintf("%d/%d/%d/%d/%d/%d", c.Queued, c.Starting, c.Running, c.Failed, c.Lost, c.Complete)
		}
	}
	var newest uint64
	for _, e := range evals {
		n.Evaluations[e.Status]++
		if e.Status != nomadapi.EvalStatusBlocked || e.CreateIndex < newest {
			continue
		}
		newest, n.Blocked = e.CreateIndex, map[string]string{}
		for g, m := range e.FailedTGAllocs {
			n.Blocked[g] = whyUnplaced(m)
		}
	}
	return n
}

// whyUnplaced says what Nomad's scheduler found for a group it could not
// place: the nodes it looked at, those filtered out and why, and those
// whose resources (a dimension such as "devices: harvest/room/cpu") ran
// out.
func whyUnplaced(m *nomadapi.AllocationMetric) string {
	if m == nil {
		return ""
	}
	counts := func(c map[string]int) string {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c)) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, c[k]))
		}
		return strings.Join(parts, ", ")
	}
	why := fmt.Sprintf("%d nodes evaluated", m.NodesEvaluated)
	if m.NodesFiltered > 0 {
		why += fmt.Sprintf("; %d filtered (%s)", m.NodesFiltered, counts(m.ConstraintFiltered))
	}
	if m.NodesExhausted > 0 {
		why += fmt.Sprintf("; %d exhausted (%s)", m.NodesExhausted, counts(m.DimensionExhausted))
	}
	return why
}
