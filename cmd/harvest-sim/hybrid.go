package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/hybridsim"
	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// hybridFlags are harvest-sim hybrid's settings.
type hybridFlags struct {
	seed                   uint64
	nodes, jobs            int
	trace, loads, policies string
	steal, probes, width   int
	swimSeconds            float64
	outputs
}

func hybridCommand() cli.CommandFactory {
	var f hybridFlags
	return command.Simple{
		Name:     "harvest-sim hybrid",
		Synopsis: "Simulate short- and long-job latency under heavy load with and without the short-job partition (Hawk, moving cutoff)",
		Usage: "harvest-sim hybrid [-nodes N] [-seed N] [-trace synthetic|swim:FILE] [-jobs N] [-load 0.5,0.9] [-policies none,partition] " +
			"[-steal N] [-json] [-json-file F] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&f.seed, "seed", 1, "random seed: the same seed gives the same jobs, probes and runs")
			fs.IntVar(&f.nodes, "nodes", 300, "nodes, each with one FIFO task queue")
			fs.StringVar(&f.trace, "trace", "synthetic", "jobs: synthetic (Sparrow-like: 90% short jobs of nodes/20 tasks of 50 s, 10% long of nodes/5 tasks of 10000 s) or swim:FILE (a SWIM .tsv's job shapes)")
			fs.IntVar(&f.jobs, "jobs", 10000, "synthetic jobs; with swim: the trace's first N jobs (0: all)")
			fs.StringVar(&f.loads, "load", "0.5,0.7,0.8,0.9,0.95", "offered loads to sweep: task-seconds per node-second (Poisson arrivals)")
			fs.StringVar(&f.policies, "policies", "none,partition", "none (long and short jobs on any node) and partition (long jobs kept off placer/partition's short-job partition)")
			fs.IntVar(&f.steal, "steal", 10, "random nodes an idle node asks for short tasks queued behind long ones (the source's task stealing); 0: none")
			fs.IntVar(&f.probes, "probes", 2, "probes per short task")
			fs.Float64Var(&f.swimSeconds, "swim-task-seconds", 30, "seconds a SWIM task takes per 64 MiB (SWIM has sizes, not times)")
			fs.IntVar(&f.width, "swim-width", 0, "fold a trace stage wider than this into this many tasks of the same task-seconds (0: nodes/20)")
			f.register(fs, "write every run as CSV", "draw short-job p90 latency against load per policy (PNG or SVG)")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error { return runHybrid(f) },
	}.Factory()
}

// hybridRun is one load and policy's result.
type hybridRun struct {
	Load float64 `json:"load"`
	hybridsim.Result
}

// hybridJobs returns the workload at one load, and its name.
func hybridJobs(f hybridFlags, trace []schedsim.TraceJob, load float64) ([]hybridsim.Job, error) {
	if trace == nil {
		return hybridsim.Synthetic{Nodes: f.nodes, Jobs: f.jobs, Load: load}.Generate(f.seed)
	}
	width := f.width
	if width == 0 {
		width = max(1, f.nodes/20)
	}
	return hybridsim.FromTrace(trace, f.nodes, width, load, f.seed)
}

// hybridTrace reads -trace: nil for synthetic.
func hybridTrace(f hybridFlags) ([]schedsim.TraceJob, string, error) {
	if f.trace == "synthetic" {
		return nil, "synthetic", nil
	}
	kind, path, _ := strings.Cut(f.trace, ":")
	if kind != "swim" || path == "" {
		return nil, "", fmt.Errorf("-trace %q: want synthetic or swim:FILE", f.trace)
	}
	trace, err := readTrace(path, func(r io.Reader) ([]schedsim.TraceJob, error) { return schedsim.ParseSWIM(r, f.swimSeconds) })
	if err != nil {
		return nil, "", err
	}
	if f.jobs > 0 && f.jobs < len(trace) {
		trace = trace[:f.jobs]
	}
	return trace, "swim:" + strings.TrimSuffix(filepath.Base(path), ".tsv"), nil
}

func runHybrid(f hybridFlags) error {
	var loads []float64
	for _, v := range parseList(f.loads) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) {
			return fmt.Errorf("-load: %q is not a load > 0", v)
		}
		loads = append(loads, x)
	}
	var policies []hybridsim.Policy
	for _, p := range parseList(f.policies) {
		if p != string(hybridsim.NoPartition) && p != string(hybridsim.Partition) {
			return fmt.Errorf("-policies: %q: want none or partition", p)
		}
		policies = append(policies, hybridsim.Policy(p))
	}
	if len(loads) == 0 || len(policies) == 0 || f.nodes < 2 || f.jobs < 0 || f.steal < 0 || f.probes < 1 || f.width < 0 {
		return fmt.Errorf("want loads, policies, at least 2 nodes, -probes of at least 1 and -jobs, -steal, -swim-width not negative")
	}
	trace, source, err := hybridTrace(f)
	if err != nil {
		return err
	}
	began := time.Now()
	var runs []hybridRun
	total := len(loads) * len(policies)
	for _, load := range loads {
		jobs, err := hybridJobs(f, trace, load)
		if err != nil {
			return err
		}
		for _, p := range policies {
			k := len(runs)
			label := fmt.Sprintf("%d runs", total)
			res, err := hybridsim.Run(hybridsim.Config{Nodes: f.nodes, Policy: p, Probes: f.probes, StealProbes: f.steal, Seed: f.seed,
				Progress: func(done float64) { progressBar(label, int(1000*(float64(k)+done)), 1000*total) }}, jobs)
			if err != nil {
				return err
			}
			runs = append(runs, hybridRun{Load: load, Result: res})
			progressBar(label, 1000*len(runs), 1000*total)
		}
	}
	wall := time.Since(began).Seconds()
	gains := p90Gains(runs)
	summary := map[string]any{"seed": f.seed, "source": source, "nodes": f.nodes, "steal_probes": f.steal, "probes": f.probes,
		"runs": runs, "partition_short_p90_reduction_percent": gains, "wall_seconds": wall, "peak_rss_mib": peakRSSMiB()}
	csv := func(path string) error { return writeHybridCSV(path, runs) }
	plot := func(path string) error { return plotHybrid(path, source, f.nodes, policies, runs) }
	return f.emit(summary, csv, plot, func() {
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "LOAD\tPOLICY\tSHORT JOBS\tSHORT MEDIAN s\tSHORT P90 s\tLONG JOBS\tLONG MEAN s\tPARTITION\tCUTOFF s\tSTOLEN\tUTIL %%\n")
		for _, r := range runs {
			part := "-"
			if r.Policy == hybridsim.Partition {
				part = fmt.Sprintf("%d-%d", r.PartitionMin, r.PartitionMax)
			}
			fmt.Fprintf(tw, "%g\t%s\t%d\t%.0f\t%.0f\t%d\t%.0f\t%s\t%.0f-%.0f\t%d\t%.1f\n", r.Load, r.Policy, r.Short.Jobs, r.Short.Median, r.Short.P90,
				r.Long.Jobs, r.Long.Mean, part, r.CutoffMin, r.CutoffMax, r.Stolen, 100*r.Utilisation)
		}
		tw.Flush()
		for _, load := range loads {
			if g, ok := gains[strconv.FormatFloat(load, 'g', -1, 64)]; ok {
				word := "lower"
				if g < 0 {
					word, g = "higher", -g
				}
				fmt.Printf("load %g: short-job p90 %.1f%% %s with the partition\n", load, g, word)
			}
		}
		fmt.Printf("%s, %d nodes, %d runs: %.1f s wall, peak RSS %.0f MiB\n", source, f.nodes, len(runs), wall, peakRSSMiB())
	})
}

// p90Gains is, per load, how much lower the partition's short-job p90 is
// than none's, in percent (negative: higher).
func p90Gains(runs []hybridRun) map[string]float64 {
	none := map[float64]float64{}
	for _, r := range runs {
		if r.Policy == hybridsim.NoPartition {
			none[r.Load] = r.Short.P90
		}
	}
	out := map[string]float64{}
	for _, r := range runs {
		if v, ok := none[r.Load]; ok && r.Policy == hybridsim.Partition && v > 0 {
			out[strconv.FormatFloat(r.Load, 'g', -1, 64)] = 100 * (v - r.Short.P90) / v
		}
	}
	return out
}

func writeHybridCSV(path string, runs []hybridRun) error {
	rows := [][]string{{"load", "policy", "nodes", "jobs", "short_jobs", "short_median_seconds", "short_p90_seconds", "short_mean_seconds",
		"long_jobs", "long_median_seconds", "long_p90_seconds", "long_mean_seconds", "partition_min", "partition_max",
		"cutoff_min_seconds", "cutoff_max_seconds", "cutoff_moves", "tasks_stolen", "makespan_seconds", "utilisation"}}
	for _, r := range runs {
		rows = append(rows, []string{ftoa(r.Load), string(r.Policy), strconv.Itoa(r.Nodes), strconv.Itoa(r.Jobs), strconv.Itoa(r.Short.Jobs),
			ftoa(r.Short.Median), ftoa(r.Short.P90), ftoa(r.Short.Mean), strconv.Itoa(r.Long.Jobs), ftoa(r.Long.Median), ftoa(r.Long.P90),
			ftoa(r.Long.Mean), strconv.Itoa(r.PartitionMin), strconv.Itoa(r.PartitionMax), ftoa(r.CutoffMin), ftoa(r.CutoffMax),
			strconv.Itoa(r.CutoffMoves), strconv.Itoa(r.Stolen), ftoa(r.Makespan), ftoa(r.Utilisation)})
	}
	return writeCSV(path, rows)
}

func plotHybrid(path, source string, nodes int, policies []hybridsim.Policy, runs []hybridRun) error {
	var series []plots.Series
	for _, p := range policies {
		s := plots.Series{Name: map[hybridsim.Policy]string{hybridsim.NoPartition: "no partition", hybridsim.Partition: "short-job partition"}[p]}
		for _, r := range runs {
			if r.Policy == p {
				s.X, s.Y = append(s.X, r.Load), append(s.Y, r.Short.P90)
			}
		}
		series = append(series, s)
	}
	return plots.Lines(path, fmt.Sprintf("Short-job p90 latency as load rises (%s, %d nodes)", source, nodes), "offered load",
		"short-job p90 latency (s)", series)
}
