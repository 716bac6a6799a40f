// Package maintenance chooses when to start cluster maintenance by
// accumulated work (maintenance-time.txt): maintenance kills what runs, so
// the work already done by running allocations (elapsed time x resources)
// is forfeited; starting when that accumulated work is low wastes least.
// The threshold is a percentile of yesterday's profile picked by the
// request's urgency (1-100: the higher, the higher the percentile, the
// sooner it starts), and a deadline forces the start. The running-count
// rule (CL) is kept for comparison. Pure: harvestctl feeds it Nomad's
// allocations, the simulator a replayed trace.
package maintenance

import (
	"fmt"
	"slices"
	"time"
)

// Alloc is one batch allocation's run.
type Alloc struct {
	Job        string
	Start, End time.Time // End zero: still running
	CPU        float64   // resources it holds (MHz, or any unit of work rate)
}

func (a Alloc) runningAt(t time.Time) bool {
	return !a.Start.After(t) && (a.End.IsZero() || a.End.After(t))
}

// Metric measures the cluster's workload at a time.
type Metric func(allocs []Alloc, at time.Time) float64

// AccumulatedWork (AW) is the work running allocations have done by at:
// elapsed time x resources, summed; what maintenance at that moment forfeits.
func AccumulatedWork(allocs []Alloc, at time.Time) float64 {
	w := 0.0
	for _, a := range allocs {
		if a.runningAt(at) {
			w += at.Sub(a.Start).Seconds() * a.CPU
		}
	}
	return w
}

// RunningJobs (CL) counts jobs with a running allocation at at.
func RunningJobs(allocs []Alloc, at time.Time) float64 {
	jobs := map[string]bool{}
	for _, a := range allocs {
		if a.runningAt(at) {
			jobs[a.Job] = true
		}
	}
	return float64(len(jobs))
}

// Profile samples a metric over [from, to) every step.
func Profile(allocs []Alloc, m Metric, from, to time.Time, step time.Duration) []float64 {
	var out []float64
	for t := from; t.Before(to); t = t.Add(step) {
		out = append(out, m(allocs, t))
	}
	return out
}

// Threshold is the urgency-th percentile of a profile (urgency 1-100).
func Threshold(profile []float64, urgency int) (float64, error) {
	if urgency < 1 || urgency > 100 {
		return 0, fmt.Errorf("urgency %d: want 1 (can wait) to 100 (most urgent)", urgency)
	}
	if len(profile) == 0 {
		return 0, fmt.Errorf("no workload profile: nothing ran in the profiled period")
	}
	s := slices.Clone(profile)
	slices.Sort(s)
	return s[min(len(s)-1, (urgency*len(s))/100)], nil
}

// Decision says whether to start now and why.
type Decision struct {
	Start  bool
	Reason string
}

// Decide compares the current workload with the threshold and the deadline.
func Decide(current, threshold float64, now, deadline time.Time) Decision {
	switch {
	case current <= threshold:
		return Decision{true, fmt.Sprintf("start now: workload %.0f is at or below the threshold %.0f", current, threshold)}
	case !deadline.IsZero() && !now.Before(deadline):
		return Decision{true, fmt.Sprintf("start now: the deadline %s has come (workload %.0f above %.0f)", deadline.Format(time.RFC3339), current, threshold)}
	}
	return Decision{false, fmt.Sprintf("wait: workload %.0f above the threshold %.0f", current, threshold)}
}

// Replay finds, in a trace, the first moment from request on (every step)
// that the metric falls to the threshold, or the deadline, and returns it
// with the work that starting then forfeits.
func Replay(allocs []Alloc, m Metric, threshold float64, request, deadline time.Time, step time.Duration) (time.Time, float64) {
	t := request
	for ; t.Before(deadline); t = t.Add(step) {
		if m(allocs, t) <= threshold {
			break
		}
	}
	return t, AccumulatedWork(allocs, t)
}

// ParseDeadline reads a maintenance deadline: a duration from now ("2h")
// or an RFC3339 time.
func ParseDeadline(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("deadline %q: want a duration from now such as 2h, or an RFC3339 time such as %s",
		s, now.Add(2*time.Hour).UTC().Format(time.RFC3339))
}

// Ran counts the runs that were running at some moment of [from, to), and
// the jobs they belong to.
func Ran(allocs []Alloc, from, to time.Time) (runs, jobs int) {
	seen := map[string]bool{}
	for _, a := range allocs {
		if a.Start.Before(to) && (a.End.IsZero() || a.End.After(from)) {
			runs++
			seen[a.Job] = true
		}
	}
	return runs, len(seen)
}
