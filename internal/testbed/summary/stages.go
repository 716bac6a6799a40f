package summary

import (
	"fmt"
	"strings"

	"github.com/harvest-platform/harvest/internal/testbed"
)

// stageTable is a row per run with finished jobs: where their time went
// (none: "").
func stageTable(reports []*testbed.Report) string {
	var b strings.Builder
	for _, r := range reports {
		t := r.StageTimes
		if t == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nWhere the finished jobs' time went (trace seconds; means, and p90 where given). A job's time is its arrival to first\n" +
				"allocation + stages x stage span + (stages - 1) x release; a stage's span is its slowest task's wait for room + retries + start +\n" +
				"length + overrun:\n\n")
			b.WriteString("| policy | seed | jobs | stages | tasks' lengths along the stages | job time | arrival to first allocation | stage span (p90) | release per stage boundary (p90) | wait for room per task (p90) | retries per task (p90) | start per task | overrun per task (p90) | jobs with a retried task: jobs, mean job time | jobs without: jobs, mean job time | simulator given the start delay and this release: finished, mean job time |\n")
			b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		}
		staged := "not run"
		if p := r.SimulatorWithStageDelay; p != nil {
			staged = fmt.Sprintf("%d, %.0f", p.Finished, p.MeanJobSeconds)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f | %.0f | %.0f | %.1f | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.1f | %.1f (%.1f) | %d, %.0f | %d, %.0f | %s |\n",
			r.Label(), r.Seed, t.Jobs, t.Stages, t.CriticalPath, r.JobSeconds.Mean, t.FirstStage.Mean, t.Span.Mean, t.Span.P90,
			t.Release.Mean, t.Release.P90, t.Queue.Mean, t.Queue.P90, t.Retry.Mean, t.Retry.P90, t.Start.Mean, t.Overrun.Mean, t.Overrun.P90,
			t.Retried.N, t.Retried.Mean, t.Clean.N, t.Clean.Mean, staged)
	}
	return b.String()
}
