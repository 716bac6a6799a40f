package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// reportSched prints or writes a sweep's operating points, H's gains over
// PT and their per-source summary.
func reportSched(f schedFlags, preset schedsim.Preset, results []schedsim.Result, took time.Duration) error {
	points := schedsim.Points(results)
	gains := schedsim.Gains(points)
	summaries := schedsim.Summarise(gains)
	peak := peakRSSMiB()
	summary := map[string]any{"preset": preset.Name, "params": preset.Params, "seeds": preset.Seeds, "first_seed": f.seed,
		"servers": results[0].Servers, "job_scale": results[0].JobScale, "offered_load": results[0].OfferedLoad,
		"points": points, "gains": gains, "summaries": summaries, "results": results,
		"wall_seconds": took.Seconds(), "peak_rss_mib": peak, "workers": f.workers}
	csv := func(path string) error { return writeSchedCSV(path, points) }
	plot := func(path string) error { return plotSched(path, points) }
	if err := f.emit(summary, csv, plot, func() { printSched(points, gains, summaries) }); err != nil {
		return err
	}
	if f.plotGains != "" {
		if err := plotGains(f.plotGains, summaries); err != nil {
			return err
		}
	}
	if !f.asJSON {
		fmt.Printf("preset %s, %d servers, job scale %.2f, offered load %.0f%%; %d runs on %d workers: %.0f s wall, peak RSS %.0f MiB\n",
			preset.Name, results[0].Servers, results[0].JobScale, 100*results[0].OfferedLoad, len(results), f.workers, took.Seconds(), peak)
	}
	return nil
}

func printSched(points []schedsim.Point, gains []schedsim.Gain, summaries []schedsim.Summary) {
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SOURCE\tSCALING\tFACTOR\tPOLICY\tPRIMARY %%\tUTIL %%\tJOB s mean [min-max]\tEVICTED\tWASTED core-h\tUNFINISHED\tSATURATED\tLONG FIT ONE\tLONG ON CONSTANT %%\n")
	for _, p := range points {
		fmt.Fprintf(tw, "%s\t%s\t%g\t%s\t%.1f\t%.1f\t%.0f [%.0f-%.0f]\t%.0f\t%.0f\t%.0f\t%d/%d\t%.0f\t%.1f\n", p.Source, p.Scaling, p.Factor, p.Policy,
			100*p.PrimaryUtil, 100*p.Utilisation, p.JobSeconds.Mean, p.JobSeconds.Min, p.JobSeconds.Max, p.Evicted.Mean, p.Wasted.Mean,
			p.Unfinished.Mean, p.Saturated, p.Seeds, p.LongFitOne.Mean, 100*p.LongOnConstant.Mean)
	}
	tw.Flush()
	for _, g := range gains {
		note := ""
		if !g.Stable {
			note = " (saturated: left out of the average)"
		}
		fmt.Printf("%s %s x%g, utilisation %.0f%%: %s; PT evicts %s as many containers%s\n", g.Source, g.Scaling, g.Factor,
			100*g.Utilisation, g, ratio(float64(g.EvictionRatio)), note)
	}
	for _, s := range summaries {
		fmt.Printf("%s %s: H's mean job time %.1f%% shorter than PT's on average (min %.1f%%, max %.1f%%) over %d stable points, %d saturated left out\n",
			s.Source, s.Scaling, s.Reduction.Mean, s.Reduction.Min, s.Reduction.Max, s.Points, s.Skipped)
	}
}

func ratio(r float64) string {
	if math.IsInf(r, 1) {
		return "infinitely"
	}
	return fmt.Sprintf("%.2fx", r)
}

func writeSchedCSV(path string, points []schedsim.Point) error {
	rows := [][]string{{"source", "scaling", "factor", "policy", "seeds", "primary_utilisation", "utilisation", "job_seconds_mean",
		"job_seconds_min", "job_seconds_max", "containers_evicted_mean", "wasted_core_hours_mean", "unfinished_mean", "saturated_seeds",
		"long_jobs_fit_one_class_mean", "long_work_on_constant_share_mean"}}
	for _, p := range points {
		rows = append(rows, []string{p.Source, string(p.Scaling), ftoa(p.Factor), string(p.Policy), strconv.Itoa(p.Seeds), ftoa(p.PrimaryUtil),
			ftoa(p.Utilisation), ftoa(p.JobSeconds.Mean), ftoa(p.JobSeconds.Min), ftoa(p.JobSeconds.Max), ftoa(p.Evicted.Mean),
			ftoa(p.Wasted.Mean), ftoa(p.Unfinished.Mean), strconv.Itoa(p.Saturated), ftoa(p.LongFitOne.Mean), ftoa(p.LongOnConstant.Mean)})
	}
	return writeCSV(path, rows)
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// plotSched draws the paper's Figure 13 per source: mean job time (with
// the seeds' min-max) against utilisation, per policy and scaling. With
// several sources, each gets its own file, the source's name before the
// extension.
func plotSched(path string, points []schedsim.Point) error {
	var sources []string
	bySource := map[string][]schedsim.Point{}
	for _, p := range points {
		if _, ok := bySource[p.Source]; !ok {
			sources = append(sources, p.Source)
		}
		bySource[p.Source] = append(bySource[p.Source], p)
	}
	for _, src := range sources {
		out := path
		if len(sources) > 1 {
			ext := filepath.Ext(path)
			out = strings.TrimSuffix(path, ext) + "-" + src + ext
		}
		var order []string
		series := map[string]*plots.Series{}
		for _, p := range bySource[src] {
			name := fmt.Sprintf("%s (%s)", strings.ToUpper(string(p.Policy)), p.Scaling)
			if series[name] == nil {
				series[name] = &plots.Series{Name: name}
				order = append(order, name)
			}
			s := series[name]
			s.X = append(s.X, 100*p.Utilisation)
			s.Y = append(s.Y, p.JobSeconds.Mean)
			s.Low, s.High = append(s.Low, p.JobSeconds.Min), append(s.High, p.JobSeconds.Max)
		}
		var all []plots.Series
		for _, n := range order {
			all = append(all, *series[n])
		}
		if err := plots.Lines(out, "Mean job time as utilisation rises ("+src+")", "average CPU utilisation, primary + harvested (%)",
			"mean job time incl. queueing (s)", all); err != nil {
			return err
		}
	}
	return nil
}

// plotGains draws the paper's Figure 14: per source and scaling, H's
// average reduction of the mean job time over the stable points, with its
// min and max.
func plotGains(path string, summaries []schedsim.Summary) error {
	var sources []string
	seen := map[string]bool{}
	bySc := map[schedsim.Scaling]map[string]schedsim.Stat{}
	var scalings []schedsim.Scaling
	for _, s := range summaries {
		if !seen[s.Source] {
			seen[s.Source] = true
			sources = append(sources, s.Source)
		}
		if bySc[s.Scaling] == nil {
			bySc[s.Scaling] = map[string]schedsim.Stat{}
			scalings = append(scalings, s.Scaling)
		}
		bySc[s.Scaling][s.Source] = s.Reduction
	}
	var series []plots.BarSeries
	for _, sc := range scalings {
		b := plots.BarSeries{Name: string(sc)}
		for _, src := range sources {
			st := bySc[sc][src]
			b.Values, b.Low, b.High = append(b.Values, st.Mean), append(b.Low, st.Min), append(b.High, st.Max)
		}
		series = append(series, b)
	}
	return plots.GroupedBars(path, "H's mean job time reduction over PT (min, average, max over the sweep)",
		"reduction of mean job time (%)", sources, series, false)
}
