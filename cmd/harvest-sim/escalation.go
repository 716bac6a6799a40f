package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/escalsim"
	"github.com/harvest-platform/harvest/sim/plots"
)

// escalationFlags are harvest-sim escalation's settings.
type escalationFlags struct {
	seed                       uint64
	delays                     string
	classes, perClass, slots   int
	load, hours, flaky, faultP float64
	evictP                     float64
	threshold                  int
	reset                      time.Duration
	outputs
}

func escalationCommand() cli.CommandFactory {
	var f escalationFlags
	return command.Simple{
		Name:     "harvest-sim escalation",
		Synopsis: "Simulate placement escalation against strict classes and greylisting against none on a skewed harvested cluster with flaky nodes",
		Usage:    "harvest-sim escalation [-seed N] [-delays 2m,10m,30m] [-load F] [-hours N] [-flaky F] [-fault-p F] [-json] [-json-file F] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			d := escalsim.Default()
			fs.Uint64Var(&f.seed, "seed", 1, "random seed: the same seed gives the same cluster, jobs and runs")
			fs.StringVar(&f.delays, "delays", "2m,10m,30m", "escalation delays to compare (one step per delay: more classes, then any node)")
			fs.IntVar(&f.classes, "classes", d.Classes, "classes of nodes (jobs rank them first 0.5, 0.25, 0.15, 0.1 of the time with 4; each half as often as the one before otherwise)")
			fs.IntVar(&f.perClass, "nodes-per-class", d.NodesPerClass, "nodes in each class")
			fs.IntVar(&f.slots, "slots", d.Slots, "task slots per node")
			fs.Float64Var(&f.load, "load", d.Load, "offered task-seconds per slot-second of the whole cluster")
			fs.Float64Var(&f.hours, "hours", d.Hours, "hours of job arrivals (runs go on until every job is done)")
			fs.Float64Var(&f.flaky, "flaky", d.FlakyShare, "share of nodes that fail tasks by their own fault")
			fs.Float64Var(&f.faultP, "fault-p", d.FaultP, "chance a flaky node fails a task")
			fs.Float64Var(&f.evictP, "evict-p", d.EvictP, "chance any node's primary tenant evicts a task (not the node's fault)")
			fs.IntVar(&f.threshold, "threshold", 3, "node faults that greylist a node")
			fs.DurationVar(&f.reset, "reset", 6*time.Hour, "greylisting counters start over this often")
			f.register(fs, "write every run as CSV", "draw each run's waits, completions, lost tasks and flaky placements as grouped bars (PNG or SVG)")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error { return runEscalation(f) },
	}.Factory()
}

// escalationConfigs is the baseline (strict classes, no greylisting),
// escalation at each delay, greylisting alone, and both at the first delay.
func escalationConfigs(f escalationFlags, delays []time.Duration) []escalsim.Config {
	base := escalsim.Config{Threshold: f.threshold, Reset: f.reset, Seed: f.seed}
	out := []escalsim.Config{withName(base, "strict classes (baseline)")}
	for _, d := range delays {
		c := base
		c.Escalate, c.Delay = true, d
		out = append(out, withName(c, "escalation "+shortDuration(d)))
	}
	g := base
	g.Greylist = true
	out = append(out, withName(g, "greylisting"))
	g.Escalate, g.Delay = true, delays[0]
	return append(out, withName(g, "escalation "+shortDuration(delays[0])+" + greylisting"))
}

// shortDuration writes whole hours or minutes as 2h or 10m.
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

func withName(c escalsim.Config, name string) escalsim.Config {
	c.Name = name
	return c
}

func runEscalation(f escalationFlags) error {
	var delays []time.Duration
	for _, v := range parseList(f.delays) {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("-delays: %q is not a duration > 0", v)
		}
		delays = append(delays, d)
	}
	if len(delays) == 0 || f.threshold < 1 || f.reset < 0 {
		return fmt.Errorf("want at least one delay, -threshold of at least 1 and -reset not negative")
	}
	w := escalsim.Default()
	w.Classes, w.NodesPerClass, w.Slots, w.Load, w.Hours = f.classes, f.perClass, f.slots, f.load, f.hours
	w.FlakyShare, w.FaultP, w.EvictP = f.flaky, f.faultP, f.evictP
	if f.classes != len(w.Weights) { // halving: the first classes fill up
		w.Weights = make([]float64, max(0, f.classes))
		for i := range w.Weights {
			w.Weights[i] = 1 / float64(int(1)<<min(i, 60))
		}
	}
	cl, jobs, err := w.Generate(f.seed)
	if err != nil {
		return err
	}
	began := time.Now()
	cfgs := escalationConfigs(f, delays)
	var results []escalsim.Result
	for i, c := range cfgs {
		progressBar(fmt.Sprintf("%d runs", len(cfgs)), i, len(cfgs))
		r, err := escalsim.Run(cl, jobs, c)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	progressBar(fmt.Sprintf("%d runs", len(cfgs)), len(cfgs), len(cfgs))
	wall := time.Since(began).Seconds()
	summary := map[string]any{"seed": f.seed, "classes": f.classes, "nodes_per_class": f.perClass, "slots": f.slots, "load": f.load,
		"hours": f.hours, "flaky_share": f.flaky, "fault_p": f.faultP, "evict_p": f.evictP, "threshold": f.threshold,
		"reset_seconds": f.reset.Seconds(), "class_weights": w.Weights, "jobs": len(jobs), "results": results,
		"wall_seconds": wall, "peak_rss_mib": peakRSSMiB()}
	csv := func(path string) error { return writeEscalationCSV(path, results) }
	plot := func(path string) error { return plotEscalation(path, len(cl.Nodes), results) }
	return f.emit(summary, csv, plot, func() {
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "POLICY\tJOBS\tMEAN WAIT s\tP90 WAIT s\tMEAN DONE s\tP90 DONE s\tOUT OF CLASS\tLOST TO FAULTS\tON FLAKY\tEVICTIONS\tGREYLISTED MAX\n")
		for _, r := range results {
			fmt.Fprintf(tw, "%s\t%d/%d\t%.0f\t%.0f\t%.0f\t%.0f\t%d\t%d\t%d\t%d\t%d\n", r.Name, r.Finished, r.Jobs, r.MeanWait, r.P90Wait,
				r.MeanCompletion, r.P90Completion, r.OutOfClass, r.LostToFaults, r.FlakyPlacements, r.Evictions, r.GreylistedMax)
		}
		tw.Flush()
		base := results[0]
		for _, r := range results[1 : 1+len(delays)] {
			fmt.Printf("%s vs strict classes: p90 wait %.0f -> %.0f s, mean completion %.0f -> %.0f s\n", r.Name, base.P90Wait, r.P90Wait,
				base.MeanCompletion, r.MeanCompletion)
		}
		g := results[1+len(delays)]
		fmt.Printf("greylisting vs none: tasks lost to node faults %d -> %d, placements on flaky nodes %d -> %d, mean completion %.0f -> %.0f s\n",
			base.LostToFaults, g.LostToFaults, base.FlakyPlacements, g.FlakyPlacements, base.MeanCompletion, g.MeanCompletion)
		fmt.Printf("%d nodes in %d classes, %d jobs, %d runs: %.1f s wall, peak RSS %.0f MiB\n", len(cl.Nodes), f.classes, len(jobs), len(results),
			wall, peakRSSMiB())
	})
}

func writeEscalationCSV(path string, results []escalsim.Result) error {
	rows := [][]string{{"policy", "jobs", "finished", "mean_wait_seconds", "p90_wait_seconds", "mean_completion_seconds",
		"p90_completion_seconds", "placements", "placements_on_flaky_nodes", "tasks_lost_to_node_faults", "evictions",
		"placements_outside_chosen_classes", "jobs_placed_outside_chosen_classes", "greylisted_max", "makespan_seconds"}}
	for _, r := range results {
		rows = append(rows, []string{r.Name, strconv.Itoa(r.Jobs), strconv.Itoa(r.Finished), ftoa(r.MeanWait), ftoa(r.P90Wait),
			ftoa(r.MeanCompletion), ftoa(r.P90Completion), strconv.Itoa(r.Placements), strconv.Itoa(r.FlakyPlacements),
			strconv.Itoa(r.LostToFaults), strconv.Itoa(r.Evictions), strconv.Itoa(r.OutOfClass), strconv.Itoa(r.EscalatedJobs),
			strconv.Itoa(r.GreylistedMax), ftoa(r.Makespan)})
	}
	return writeCSV(path, rows)
}

// plotEscalation draws one group per measure, one bar per run, on a log
// axis (a missing bar is a zero).
func plotEscalation(path string, nodes int, results []escalsim.Result) error {
	categories := []string{"mean wait s", "p90 wait s", "mean completion s", "p90 completion s", "tasks lost to faults", "placements on flaky"}
	var series []plots.BarSeries
	for _, r := range results {
		series = append(series, plots.BarSeries{Name: r.Name, Values: []float64{r.MeanWait, r.P90Wait, r.MeanCompletion, r.P90Completion,
			float64(r.LostToFaults), float64(r.FlakyPlacements)}})
	}
	return plots.GroupedBars(path, fmt.Sprintf("Escalation and greylisting against their baselines (%d nodes)", nodes), "seconds or tasks (log)",
		categories, series, true)
}
