package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/harvest-platform/harvest/sim/plots"
)

// WriteSummary writes summary.md (a row per run: the testbed's figures
// beside the simulator's prediction), job-times.png (the job-time CDF
// of every run, Figure 11's form) and utilisation.png (the harvested and
// primary share of the cores over time) into dir.
func WriteSummary(dir string, reports []*Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("| policy | seed | jobs | finished | unfinished | submit errors | mean job s | p50 | p90 | in span: finished, mean s | sim: finished, mean s | sim with the start delay: finished, mean s | kills | sim kills | refused starts | abandoned allocations | wasted task-s | sim wasted | breaches | longest breach s (bound) | start delay p50/p90 s (shortest task s) | allocations, host CPU s each, daemons' mean cores | blob reads, failed, busy denials, lost of objects | daemon ERROR lines |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var series []plots.Series
	for _, r := range reports {
		sim, delayed := SimPrediction{}, SimPrediction{}
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
			r.label(), r.Seed, r.Submitted, r.Finished, r.Unfinished, r.SubmitErrors, r.JobSeconds.Mean, r.JobSeconds.P50, r.JobSeconds.P90,
			r.FinishedInSpan, r.JobSecondsInSpan.Mean, sim.Finished, sim.MeanJobSeconds, delayed.Finished, delayed.MeanJobSeconds, r.Kills, sim.Kills, r.Refused, r.Abandoned,
			r.WastedTaskSeconds, sim.WastedTaskSeconds, len(r.Breaches), r.LongestBreach, r.BreachBound,
			r.StartDelay.P50, r.StartDelay.P90, r.ShortestTaskWall, r.Allocations, r.HostCPUPerAllocation, r.DaemonCores, blob, errs)
		times := append([]float64(nil), r.JobSecondsAll...)
		sort.Float64s(times)
		s := plots.Series{Name: fmt.Sprintf("%s seed %d", r.label(), r.Seed)}
		for i, t := range times {
			s.X = append(s.X, t)
			s.Y = append(s.Y, float64(i+1)/float64(len(times)))
		}
		if len(times) > 0 {
			series = append(series, s)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(b.String()), 0o644); err != nil {
		return err
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

// utilisationSeries is a line per run of the harvested allocations' share
// of all cores, and one of the primaries' per seed (the policies of a seed
// replay the same trace).
func utilisationSeries(reports []*Report) []plots.Series {
	var out []plots.Series
	primaries := map[uint64]bool{}
	for _, r := range reports {
		if len(r.Utilisation) == 0 {
			continue
		}
		h := plots.Series{Name: fmt.Sprintf("harvested, %s seed %d", r.label(), r.Seed)}
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

// label is the run's policy with its named deviations, if any.
func (r *Report) label() string {
	var dev []string
	if r.NoRoomRule {
		dev = append(dev, "no room rule")
	}
	if r.SchedulerAlgorithm != "" {
		dev = append(dev, r.SchedulerAlgorithm)
	}
	if len(dev) == 0 {
		return string(r.Policy)
	}
	return fmt.Sprintf("%s (%s)", r.Policy, strings.Join(dev, ", "))
}
