// Package maintsim replays a trace of batch allocations to compare the two
// rules of placer/maintenance (maintenance-time.txt, Section 5) for when to
// start cluster-wide maintenance: when accumulated work (AW) or when the
// count of running jobs (CL) falls to a threshold. It profiles a first
// period, takes each urgency's threshold from that profile with
// maintenance.Threshold, and costs every time point of the following
// evaluation period where a rule's metric is at or below its threshold by
// the work maintenance then forfeits, averaged over those points. It owns
// the replay (an incremental sweep equal to maintenance.Profile over
// AccumulatedWork and RunningJobs) and the Alibaba 2017 conversion; the
// metrics and thresholds are placer/maintenance's own. No I/O.
package maintsim

import (
	"fmt"
	"slices"
	"time"

	"github.com/harvest-platform/harvest/placer/maintenance"
)

// Forfeit names what maintenance at a moment is taken to lose.
type Forfeit string

const (
	// Running is maintenance.AccumulatedWork: the work running allocations
	// have done (elapsed time x resources). The default.
	Running Forfeit = "running"
	// Job is JobWork: the work of every unfinished job, its completed
	// allocations included, since a killed job reruns from scratch (the
	// source's Section 4.2 counts it so).
	Job Forfeit = "job"
)

// Config is one replay's settings.
type Config struct {
	Step      time.Duration // between time points (the source checks every minute)
	Urgencies []int         // percentiles 1-100 (the source: 1, 2, 5, 10, 20)
	Forfeit   Forfeit       // the cost, and the AW rule's metric
	From, To  time.Time     // zero: the trace's first start and last end
}

// Rule is one rule's outcome at one urgency.
type Rule struct {
	Threshold   float64 `json:"threshold"`
	Candidates  int     `json:"candidate_points"` // evaluation points at or below the threshold
	MeanForfeit float64 `json:"mean_forfeit"`     // over those points; 0 when there is none
}

// Level is one urgency's outcome for both rules: with thresholds from the
// profile period (the source's method), and with thresholds from the
// evaluation period itself (a perfect forecast: the urgency's share of
// points qualifies under each rule, which isolates the choice of metric
// from how well the profile forecasts the evaluation period).
type Level struct {
	Urgency       int      `json:"urgency"`
	AW            Rule     `json:"aw"`
	CL            Rule     `json:"cl"`
	AWSaving      *float64 `json:"aw_saving_percent,omitempty"` // vs CL; nil unless both have candidates and CL forfeits something
	PerfectAW     Rule     `json:"perfect_forecast_aw"`
	PerfectCL     Rule     `json:"perfect_forecast_cl"`
	PerfectSaving *float64 `json:"perfect_forecast_aw_saving_percent,omitempty"`
}

// Result is a replay's outcome.
type Result struct {
	Allocs        int       `json:"allocs"`
	Forfeit       Forfeit   `json:"forfeit"`
	From          time.Time `json:"from"`
	Split         time.Time `json:"evaluation_from"` // the profile is [From, Split), the evaluation [Split, To)
	To            time.Time `json:"to"`
	StepSeconds   float64   `json:"step_seconds"`
	ProfilePoints int       `json:"profile_points"`
	EvalPoints    int       `json:"evaluation_points"`
	Levels        []Level   `json:"levels"`
}

// Split returns where the evaluation period starts: a day after from when
// the trace spans two days or more (profile day 1, evaluate day 2, as the
// source), otherwise halfway, on a step.
func Split(from, to time.Time, step time.Duration) (split, end time.Time) {
	const day = 24 * time.Hour
	if to.Sub(from) >= 2*day {
		return from.Add(day), from.Add(2 * day)
	}
	half := to.Sub(from) / 2
	return from.Add(half.Truncate(step)), to
}

// Evaluate replays allocs.
func Evaluate(allocs []maintenance.Alloc, cfg Config) (Result, error) {
	if cfg.Step <= 0 || len(cfg.Urgencies) == 0 {
		return Result{}, fmt.Errorf("maintsim: want a positive step and at least one urgency")
	}
	if cfg.Forfeit == "" {
		cfg.Forfeit = Running
	}
	if cfg.Forfeit != Running && cfg.Forfeit != Job {
		return Result{}, fmt.Errorf("forfeit %q: want running or job", cfg.Forfeit)
	}
	var first, last time.Time
	for i, a := range allocs {
		if i == 0 || a.Start.Before(first) {
			first = a.Start
		}
		if a.End.After(last) {
			last = a.End
		}
	}
	from, to := cfg.From, cfg.To
	if from.IsZero() {
		from = first
	}
	if to.IsZero() {
		to = last
	}
	if !to.After(from) {
		return Result{}, fmt.Errorf("maintsim: the trace spans no time")
	}
	split, end := Split(from, to, cfg.Step)
	if !split.After(from) || !end.After(split) {
		return Result{}, fmt.Errorf("maintsim: %s is too short for a profile and an evaluation period %s apart", to.Sub(from), cfg.Step)
	}
	aw, cl := Sweep(allocs, from, end, cfg.Step)
	cost := aw
	if cfg.Forfeit == Job {
		work := jobWork(allocs)
		cost = make([]float64, len(aw))
		for i := range cost {
			cost[i] = work(from.Add(time.Duration(i) * cfg.Step))
		}
	}
	n := 0 // profile points: those before split
	for t := from; t.Before(split); t = t.Add(cfg.Step) {
		n++
	}
	res := Result{Allocs: len(allocs), Forfeit: cfg.Forfeit, From: from, Split: split, To: end, StepSeconds: cfg.Step.Seconds(),
		ProfilePoints: n, EvalPoints: len(aw) - n}
	for _, u := range cfg.Urgencies {
		l := Level{Urgency: u}
		var err error
		if l.AW, l.CL, l.AWSaving, err = rules(cost[:n], cl[:n], cost[n:], cl[n:], u); err != nil {
			return Result{}, err
		}
		if l.PerfectAW, l.PerfectCL, l.PerfectSaving, err = rules(cost[n:], cl[n:], cost[n:], cl[n:], u); err != nil {
			return Result{}, err
		}
		res.Levels = append(res.Levels, l)
	}
	return res, nil
}

// rules takes both rules' thresholds at urgency u from a profile and
// costs the evaluation points that meet them.
func rules(profAW, profCL, evalAW, evalCL []float64, u int) (aw, cl Rule, saving *float64, err error) {
	if aw.Threshold, err = maintenance.Threshold(profAW, u); err != nil {
		return
	}
	if cl.Threshold, err = maintenance.Threshold(profCL, u); err != nil {
		return
	}
	aw.Candidates, aw.MeanForfeit = candidates(evalAW, evalAW, aw.Threshold)
	cl.Candidates, cl.MeanForfeit = candidates(evalCL, evalAW, cl.Threshold)
	if aw.Candidates > 0 && cl.Candidates > 0 && cl.MeanForfeit > 0 {
		s := 100 * (cl.MeanForfeit - aw.MeanForfeit) / cl.MeanForfeit
		saving = &s
	}
	return
}

// candidates counts the points whose metric is at or below threshold and
// averages their cost.
func candidates(metric, cost []float64, threshold float64) (int, float64) {
	n, sum := 0, 0.0
	for i, m := range metric {
		if m <= threshold {
			n++
			sum += cost[i]
		}
	}
	if n == 0 {
		return 0, 0
	}
	return n, sum / float64(n)
}

// Sweep samples AW (maintenance.AccumulatedWork) and CL
// (maintenance.RunningJobs) every step over [from, to) in one pass over the
// allocations' starts and ends, instead of one pass over every allocation
// per point as maintenance.Profile does; the values are the same.
func Sweep(allocs []maintenance.Alloc, from, to time.Time, step time.Duration) (aw, cl []float64) {
	var live []maintenance.Alloc
	for _, a := range allocs {
		if a.End.IsZero() || a.End.After(a.Start) { // one that ended as it started never runs
			live = append(live, a)
		}
	}
	starts := slices.Clone(live)
	slices.SortFunc(starts, func(a, b maintenance.Alloc) int { return a.Start.Compare(b.Start) })
	var ends []maintenance.Alloc
	for _, a := range live {
		if !a.End.IsZero() {
			ends = append(ends, a)
		}
	}
	slices.SortFunc(ends, func(a, b maintenance.Alloc) int { return a.End.Compare(b.End) })
	sec := func(t time.Time) float64 { return t.Sub(from).Seconds() }
	var rate, startRate float64 // sums over running allocations of CPU and of start x CPU
	jobs := map[string]int{}
	si, ei := 0, 0
	for t := from; t.Before(to); t = t.Add(step) {
		for ; si < len(starts) && !starts[si].Start.After(t); si++ {
			a := starts[si]
			rate += a.CPU
			startRate += sec(a.Start) * a.CPU
			jobs[a.Job]++
		}
		for ; ei < len(ends) && !ends[ei].End.After(t); ei++ { // started earlier: its start is at most its end
			a := ends[ei]
			rate -= a.CPU
			startRate -= sec(a.Start) * a.CPU
			if jobs[a.Job]--; jobs[a.Job] == 0 {
				delete(jobs, a.Job)
			}
		}
		aw = append(aw, sec(t)*rate-startRate)
		cl = append(cl, float64(len(jobs)))
	}
	return aw, cl
}

// JobWork is the work of every job unfinished at at (its first allocation
// started, its last not yet ended), completed allocations included:
// elapsed time x resources of each of its allocations started by at. It is
// what maintenance forfeits when a killed job reruns from scratch.
func JobWork(allocs []maintenance.Alloc, at time.Time) float64 { return jobWork(allocs)(at) }

// jobWork is JobWork with each job's span found once, for many moments.
func jobWork(allocs []maintenance.Alloc) func(at time.Time) float64 {
	type span struct {
		first, last time.Time
		open        bool // an allocation still running at the trace's end
	}
	jobs := map[string]*span{}
	for _, a := range allocs {
		s := jobs[a.Job]
		if s == nil {
			s = &span{first: a.Start, last: a.End}
			jobs[a.Job] = s
		}
		if a.Start.Before(s.first) {
			s.first = a.Start
		}
		if a.End.After(s.last) {
			s.last = a.End
		}
		s.open = s.open || a.End.IsZero()
	}
	of := make([]*span, len(allocs))
	for i, a := range allocs {
		of[i] = jobs[a.Job]
	}
	return func(at time.Time) float64 {
		w := 0.0
		for i, a := range allocs {
			s := of[i]
			if s.first.After(at) || !s.open && !s.last.After(at) || a.Start.After(at) {
				continue // the job has not begun or is over, or this allocation has not begun
			}
			stop := at
			if !a.End.IsZero() && a.End.Before(at) {
				stop = a.End
			}
			w += max(0, stop.Sub(a.Start).Seconds()) * a.CPU
		}
		return w
	}
}
