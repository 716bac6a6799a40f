package testbed

import (
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// BreachBound is the longest a breach may last (wall): the driver acts on
// a reading at most stale_after (3 s) old after evict_grace (0.5 s), and
// the evicted task's process takes up to a second to go.
const BreachBound = 4.5

// SimPrediction is the simulator's outcome for the same tenants, servers,
// seed and stream (trace seconds).
type SimPrediction struct {
	Finished          int     `json:"finished"`
	Unfinished        int     `json:"unfinished"`
	MeanJobSeconds    float64 `json:"mean_job_seconds"`
	Kills             int     `json:"kills"`
	WastedTaskSeconds float64 `json:"wasted_task_seconds"`
	// StartDelay (trace seconds) each container waited before its task,
	// StageDelay each job at each stage boundary.
	StartDelay float64 `json:"start_delay_seconds"`
	StageDelay float64 `json:"stage_delay_seconds,omitempty"`
}

func predictionOf(r schedsim.Result, delay float64) *SimPrediction {
	return &SimPrediction{Finished: r.Jobs, Unfinished: r.Unfinished, MeanJobSeconds: r.MeanJobSeconds, Kills: r.Evicted,
		WastedTaskSeconds: r.WastedTaskSeconds, StartDelay: delay}
}

// predict runs the simulator on the testbed's configuration as it is,
// again with every container held for the testbed's median start delay
// (trace seconds) before its task runs, and again with each stage boundary
// held too for the testbed's mean release (trace seconds; 0: not run): the
// differences between the two that the simulator does not model by
// default, measured.
func predict(cfg schedsim.Config, delay, release float64, log hclog.Logger) (plain, delayed, staged *SimPrediction) {
	seconds := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	runs := []struct {
		start, stage float64
		out          **SimPrediction
	}{{0, 0, &plain}, {delay, 0, &delayed}, {delay, release, &staged}}
	for _, r := range runs {
		if r.out == &staged && release <= 0 {
			continue
		}
		cfg.StartDelay, cfg.StageDelay = seconds(r.start), seconds(r.stage)
		res, err := schedsim.Run(cfg)
		if err != nil {
			log.Error("the simulator's prediction", "start_delay", r.start, "stage_delay", r.stage, "error", err)
			continue
		}
		p := predictionOf(res, r.start)
		p.StageDelay = r.stage
		*r.out = p
	}
	return plain, delayed, staged
}

// report counts the run's outcome from its jobs and their allocations.
func (c Config) report(jobs []*job, allocs []alloc, primary primaryAt, spanStart, began, end time.Time, scale float64) *Report {
	rep := &Report{Policy: c.Policy, Seed: c.Seed, Clients: c.Clients, Speedup: c.Speedup, TraceHours: c.TraceHours,
		SpanStart: spanStart, JobScale: scale, BreachBound: BreachBound, ShortestTaskWall: -1,
		NoRoomRule: c.NoRoomRule, RoomDevice: c.RoomDevice, SchedulerAlgorithm: c.SchedulerAlgorithm}
	if c.EscalationDelay > 0 {
		rep.EscalationDelay = c.EscalationDelay.String()
	}
	by := ofJob(allocs)
	var times, inSpan, delays []float64
	tally := stageTally{speedup: c.Speedup}
	spanEnd := began.Add(c.wall(c.TraceHours * 3600))
	for _, j := range jobs {
		if j == nil {
			continue
		}
		rep.Submitted++
		if j.SubmitErr != "" {
			rep.SubmitErrors++
			continue
		}
		for _, st := range j.Stages {
			for _, d := range st {
				if w := d / c.Speedup; rep.ShortestTaskWall < 0 || w < rep.ShortestTaskWall {
					rep.ShortestTaskWall = w
				}
			}
		}
		finish, ok := jobOutcome(j, by[j.ID])
		if !ok {
			rep.Unfinished++
			continue
		}
		rep.Finished++
		arrival := began.Add(c.wall(j.At))
		took := finish.Sub(arrival).Seconds() * c.Speedup
		tally.add(j, by[j.ID], arrival, took)
		times = append(times, took)
		if !finish.After(spanEnd) {
			inSpan = append(inSpan, took)
		}
	}
	for _, a := range allocs {
		if !a.Started.IsZero() {
			delays = append(delays, a.Started.Sub(a.Created).Seconds())
		}
		if a.Status == "failed" && !a.Replaced {
			rep.Abandoned++
		}
		switch {
		case a.Evicted:
			rep.Kills++
			if rep.KillsByReason == nil {
				rep.KillsByReason = map[string]int{}
			}
			rep.KillsByReason[a.KillReason]++
		case a.Refused:
			rep.Refused++
		case a.Status == "failed":
			rep.Failures++
		default:
			continue
		}
		if !a.Started.IsZero() {
			rep.WastedTaskSeconds += finishOr(a, end).Sub(a.Started).Seconds() * c.Speedup
		}
	}
	rep.JobSeconds, rep.JobSecondsAll = summarize(times), times
	rep.StageTimes = tally.times()
	rep.FinishedInSpan, rep.JobSecondsInSpan = len(inSpan), summarize(inSpan)
	rep.StartDelay = summarize(delays)
	rep.Breaches = breaches(allocs, primary, float64(c.NodeCores), began, end, c.wall(history.Slot.Seconds()))
	for _, b := range rep.Breaches {
		rep.LongestBreach = max(rep.LongestBreach, b)
		if b > BreachBound {
			rep.BreachesOverBound++
		}
	}
	return rep
}

// logFiles are the cluster's daemons' logs.
func logFiles(st *localcluster.State) []string {
	files, _ := filepath.Glob(filepath.Join(st.RunDir, "logs", "*.log"))
	return files
}
