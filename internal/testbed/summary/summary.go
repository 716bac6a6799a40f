package summary

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/harvest-platform/harvest/internal/testbed"
	"github.com/harvest-platform/harvest/sim/plots"
)

// Write writes summary.md (a row per run: the testbed's figures
// beside the simulator's prediction, and the real primary's when a run had
// one), job-times.png (the job-time CDF of every run, Figure 11's form),
// utilisation.png (the harvested and primary share of the cores over time)
// and primary-p99.png (the real primary's p99 per minute, Figure 10's form)
// into dir.
func Write(dir string, reports []*testbed.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("| policy | seed | jobs | finished | unfinished | submit errors | mean job s | p50 | p90 | in span: finished, mean s | sim: finished, mean s | sim with the start delay: finished, mean s | kills | sim kills | refused starts | abandoned allocations | wasted task-s | sim wasted | breaches | longest breach s (bound) | start delay p50/p90 s (shortest task s) | allocations, host CPU s each, daemons' mean cores | blob reads, failed, busy denials, lost of objects | daemon ERROR lines (refusals apart) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var series []plots.Series
	for _, r := range reports {
		sim, delayed := testbed.SimPrediction{}, testbed.SimPrediction{}
		if r.Simulator != nil {
			sim = *r.Simulator
		}
		if r.SimulatorWithDelay != nil {
			delayed = *r.SimulatorWithDelay
		}
		errs := 0
		for _, n := range r.DaemonErrorLines {
			errs += n
		}
		blob := "none"
		if r.Blob != nil {
			blob = fmt.Sprintf("%d, %d, %d, %d of %d", r.Blob.Reads, r.Blob.ReadFailures, r.Blob.BusyDenials, r.Blob.Lost, r.Blob.Objects)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.0f | %.0f | %.0f | %d, %.0f | %d, %.0f | %d, %.0f | %d | %d | %d | %d | %.0f | %.0f | %d | %.1f (%.1f) | %.1f/%.1f (%.2f) | %d, %.2f, %.2f | %s | %d |\n",
			r.Label(), r.Seed, r.Submitted, r.Finished, r.Unfinished, r.SubmitErrors, r.JobSeconds.Mean, r.JobSeconds.P50, r.JobSeconds.P90,
			r.FinishedInSpan, r.JobSecondsInSpan.Mean, sim.Finished, sim.MeanJobSeconds, delayed.Finished, delayed.MeanJobSeconds, r.Kills, sim.Kills, r.Refused, r.Abandoned,
			r.WastedTaskSeconds, sim.WastedTaskSeconds, len(r.Breaches), r.LongestBreach, r.BreachBound,
			r.StartDelay.P50, r.StartDelay.P90, r.ShortestTaskWall, r.Allocations, r.HostCPUPerAllocation, r.DaemonCores, blob, errs)
		times := append([]float64(nil), r.JobSecondsAll...)
		sort.Float64s(times)
		s := plots.Series{Name: fmt.Sprintf("%s seed %d", r.Label(), r.Seed)}
		for i, t := range times {
			s.X = append(s.X, t)
			s.Y = append(s.Y, float64(i+1)/float64(len(times)))
		}
		if len(times) > 0 {
			series = append(series, s)
		}
	}
	b.WriteString(policyTable(reports))
	b.WriteString(stageTable(reports))
	b.WriteString(realPrimaryTable(reports))
	b.WriteString(unfinishedTable(reports))
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if p99 := realPrimarySeries(reports); len(p99) > 0 {
		if err := plots.Lines(filepath.Join(dir, "primary-p99.png"), "The real primary's p99 latency per wall minute (Figure 10's form)",
			"trace hours from the span's start", "p99 latency (ms)", p99); err != nil {
			return err
		}
	}
	if len(series) > 0 {
		if err := plots.Lines(filepath.Join(dir, "job-times.png"), "Job times on the testbed (queueing counted)", "job time (trace seconds)", "share of jobs", series); err != nil {
			return err
		}
	}
	if use := utilisationSeries(reports); len(use) > 0 {
		return plots.Lines(filepath.Join(dir, "utilisation.png"), "Harvested allocations and primaries, every 10 trace minutes", "trace hours from the span's start", "share of all cores", use)
	}
	return nil
}

// realPrimaryTable is a row per run with a real primary (none: "").
func realPrimaryTable(reports []*testbed.Report) string {
	var b strings.Builder
	for _, r := range reports {
		p := r.RealPrimary
		if p == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nThe real primary (its p99 latency per wall minute, ms; its wait for a CPU per second on one, from schedstat; " +
				"the tail split per minute: the p99 of each request's wait for a CPU inside its handler, of its time outside the handler, and of the " +
				"testbed's own lateness in sending it, part of the time outside the handler and of the measuring side, not the primary's):\n\n")
			b.WriteString("| policy | seed | node (tenant), CPU; load | minutes | requests, failed | p99 per minute: mean, p50, p90, max | wait per CPU-second | " +
				"handler's wait, p99 per minute: mean, max | outside the handler, p99 per minute: mean, max | of it the testbed's lateness, p99 per minute: mean, max |\n")
			b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
		}
		s := p.P99PerMinute
		meanMax := func(s *testbed.Summary) string {
			if s == nil {
				return "not recorded"
			}
			return fmt.Sprintf("%.1f, %.1f", s.Mean, s.Max)
		}
		where := fmt.Sprintf("%s (%s), %d", p.Node, p.Tenant, p.CPU)
		if p.Load == "" {
			where += "; load in the testbed's process"
		} else {
			where += "; load at " + p.Load
		}
		if p.LoadError != "" {
			where += "; the load failed: " + p.LoadError
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %d, %d | %.1f, %.1f, %.1f, %.1f | %.3f | %s | %s | %s |\n",
			r.Label(), r.Seed, where, len(p.Minutes), p.Requests, p.Failed, s.Mean, s.P50, s.P90, s.Max, p.WaitPerCPUSecond,
			meanMax(p.HandlerWaitP99PerMinute), meanMax(p.OutsideHandlerP99PerMinute), meanMax(p.DriverLateP99PerMinute))
	}
	return b.String()
}

// realPrimarySeries is a line per run of the real primary's p99 per minute.
func realPrimarySeries(reports []*testbed.Report) []plots.Series {
	var out []plots.Series
	for _, r := range reports {
		if r.RealPrimary == nil {
			continue
		}
		s := plots.Series{Name: fmt.Sprintf("%s seed %d", r.Label(), r.Seed)}
		for _, m := range r.RealPrimary.Minutes {
			if m.Requests > m.Failed {
				s.X, s.Y = append(s.X, m.TraceHours), append(s.Y, m.P99ms)
			}
		}
		if len(s.X) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// utilisationSeries is a line per run of the harvested allocations' share
// of all cores, and one of the primaries' per seed (the policies of a seed
// replay the same trace).
func utilisationSeries(reports []*testbed.Report) []plots.Series {
	var out []plots.Series
	primaries := map[uint64]bool{}
	for _, r := range reports {
		if len(r.Utilisation) == 0 {
			continue
		}
		h := plots.Series{Name: fmt.Sprintf("harvested, %s seed %d", r.Label(), r.Seed)}
		p := plots.Series{Name: fmt.Sprintf("primaries, seed %d", r.Seed)}
		for _, u := range r.Utilisation {
			h.X, h.Y = append(h.X, u.TraceSeconds/3600), append(h.Y, u.Harvested)
			p.X, p.Y = append(p.X, u.TraceSeconds/3600), append(p.Y, u.Primary)
		}
		out = append(out, h)
		if !primaries[r.Seed] {
			primaries[r.Seed] = true
			out = append(out, p)
		}
	}
	return out
}
