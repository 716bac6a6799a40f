package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/sim/packsim"
	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// packingFlags are harvest-sim packing's settings.
type packingFlags struct {
	seed                        uint64
	nodes, minNodes             int
	nodeMem, machineMem, sample float64
	headroom                    float64
	highThreshold               float64
	releaseDelay, step          time.Duration
	trace, policies             string
	synHours, synRunning        float64
	synSeconds                  float64
	outputs
}

func packingCommand() cli.CommandFactory {
	var f packingFlags
	return command.Simple{
		Name: "harvest-sim packing", Synopsis: "Simulate node-hours in use on a pool of harvested nodes under Nomad's batch placement and container packing",
		Usage: "harvest-sim packing [-trace batch_task.csv.gz [-sample F]] [-nodes N] [-node-mem MB] [-high-threshold F] [-release-delay 10m] " +
			"[-policies spread,binpack,packed] [-json] [-json-file F] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&f.seed, "seed", 1, "random seed: the same seed gives the same workload, sample and placements")
			fs.IntVar(&f.nodes, "nodes", 0, "nodes in the pool (the most a scaler could bring up); 0: -headroom times the workload's peak memory, in nodes")
			fs.Float64Var(&f.headroom, "headroom", 1.25, "with -nodes 0: the pool over the workload's peak memory demand")
			fs.Float64Var(&f.nodeMem, "node-mem", 6144, "harvestable memory per node, MB (about 10 of the trace's mean containers)")
			fs.StringVar(&f.trace, "trace", "", "Alibaba 2017 batch_task.csv[.gz]: one task per sampled instance; empty: a synthetic workload")
			fs.Float64Var(&f.sample, "sample", 0.01, "with -trace: share of the trace's instances simulated (it runs about 136,000 at once)")
			fs.Float64Var(&f.machineMem, "machine-mem", 65536, "with -trace: MB that the trace's normalised memory 1.0 stands for (an assumption: the trace does not say)")
			fs.Float64Var(&f.synHours, "synthetic-hours", 48, "without -trace: hours of arrivals")
			fs.Float64Var(&f.synRunning, "synthetic-running", 200, "without -trace: tasks running on average (a daily cycle swings it by 80%)")
			fs.Float64Var(&f.synSeconds, "synthetic-task-seconds", 600, "without -trace: mean task duration (exponential); tasks take 0.5, 1 or 2 GB")
			fs.StringVar(&f.policies, "policies", "spread,binpack,packed", "placements: spread (Nomad batch, spread algorithm), binpack (Nomad batch, default binpack algorithm), packed")
			fs.Float64Var(&f.highThreshold, "high-threshold", packing.Default().HighThreshold, "packing: share of a node's memory from which it is a high node")
			fs.IntVar(&f.minNodes, "min-nodes", packing.Default().MinNodes, "packing: off below this many nodes")
			fs.DurationVar(&f.releaseDelay, "release-delay", 10*time.Minute, "how long a node stays in use after its last task ends (the scaler's wait before releasing it)")
			fs.DurationVar(&f.step, "step", 5*time.Minute, "timeline sampling interval (the plot and CSV)")
			f.register(fs, "write nodes in use over time per policy as CSV", "draw nodes in use over time per policy (PNG or SVG)")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error { return runPacking(f) },
	}.Factory()
}

// packingTasks is the workload the flags name, and what describes it.
func packingTasks(f packingFlags) ([]packsim.Task, map[string]any, error) {
	if f.trace == "" {
		w := packsim.DefaultSynthetic(f.seed)
		w.Hours, w.MeanRunning, w.MeanSeconds = f.synHours, f.synRunning, f.synSeconds
		tasks := w.Tasks()
		if len(tasks) == 0 {
			return nil, nil, fmt.Errorf("the synthetic workload is empty: want positive -synthetic-hours, -synthetic-running and -synthetic-task-seconds")
		}
		return tasks, map[string]any{"source": "synthetic", "synthetic": w}, nil
	}
	if !(f.sample > 0 && f.sample <= 1) || !(f.machineMem > 0) {
		return nil, nil, fmt.Errorf("want -sample in (0, 1] and a positive -machine-mem")
	}
	trace, err := readTrace(f.trace, schedsim.ParseAlibabaTasks)
	if err != nil {
		return nil, nil, err
	}
	tasks, st := packsim.FromAlibaba(trace, f.machineMem, f.sample, f.seed)
	if len(tasks) == 0 {
		return nil, nil, fmt.Errorf("%s: no instance kept; raise -sample", f.trace)
	}
	return tasks, map[string]any{"source": f.trace, "sample": f.sample, "machine_mem_mb": f.machineMem, "trace": st}, nil
}

func runPacking(f packingFlags) error {
	var policies []packsim.Policy
	for _, v := range parseList(f.policies) {
		p, err := packsim.ParsePolicy(v)
		if err != nil {
			return fmt.Errorf("-policies: %w", err)
		}
		policies = append(policies, p)
	}
	if len(policies) == 0 || f.nodes < 0 || f.headroom < 1 || !(f.nodeMem > 0) || f.releaseDelay < 0 || f.step <= 0 {
		return fmt.Errorf("want a policy, -nodes not negative, -headroom at least 1, a positive -node-mem and -step, and no negative -release-delay")
	}
	began := time.Now()
	tasks, workload, err := packingTasks(f)
	if err != nil {
		return err
	}
	peak := packsim.PeakMem(tasks) / f.nodeMem
	if f.nodes == 0 {
		f.nodes = max(1, int(math.Ceil(f.headroom*peak)))
	}
	var results []packsim.Result
	for _, p := range policies {
		label := fmt.Sprintf("packing %s", p)
		r, err := packsim.Run(tasks, packsim.Config{Seed: f.seed, Policy: p, Nodes: f.nodes, NodeMem: f.nodeMem,
			Packing: packing.Config{HighThreshold: f.highThreshold, MinNodes: f.minNodes}, ReleaseDelay: f.releaseDelay.Seconds(),
			Step: f.step.Seconds(), Progress: func(done float64) { progressBar(label, int(1000*done), 1000) }})
		if err != nil {
			return err
		}
		progressBar(label, 1000, 1000)
		results = append(results, r)
	}
	savings := packingSavings(results)
	summary := map[string]any{"seed": f.seed, "workload": workload, "tasks": len(tasks), "nodes": f.nodes, "peak_demand_nodes": peak, "node_mem_mb": f.nodeMem,
		"high_threshold": f.highThreshold, "min_nodes": f.minNodes, "release_delay_seconds": f.releaseDelay.Seconds(),
		"results": results, "node_hours_saved_percent_vs_" + string(results[0].Policy): savings,
		"wall_seconds": time.Since(began).Seconds(), "peak_rss_mib": peakRSSMiB()}
	csv := func(path string) error { return writePackingCSV(path, results) }
	plot := func(path string) error {
		var series []plots.Series
		for _, r := range results {
			s := plots.Series{Name: string(r.Policy)}
			for _, p := range r.Timeline {
				s.X, s.Y = append(s.X, p.Hours), append(s.Y, float64(p.InUse))
			}
			series = append(series, s)
		}
		title := fmt.Sprintf("Nodes in use, %d-node pool, %s release delay", f.nodes, f.releaseDelay)
		return plots.Lines(path, title, "hours", "nodes in use", series)
	}
	return f.emit(summary, csv, plot, func() {
		fmt.Printf("%d tasks (%v; peak demand %.1f nodes) on %d nodes of %.0f MB, release delay %s, high threshold %g\n", len(tasks),
			workload["source"], peak, f.nodes, f.nodeMem, f.releaseDelay, f.highThreshold)
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "POLICY\tNODE-h IN USE\tSAVING vs %s %%\tMEAN NODES\tPEAK NODES\tNODES USED\tMEM UTIL %%\tMEAN WAIT s\tP90 WAIT s\tRELEASABLE node-h\tTOO BIG\n",
			results[0].Policy)
		for i, r := range results {
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%d\n", r.Policy, r.NodeHours, savings[i], r.MeanNodes,
				r.PeakNodes, r.NodesTouched, 100*r.MemUtilisation, r.MeanWait, r.P90Wait, r.ReleasableNodeHours, r.TooBig)
		}
		tw.Flush()
		fmt.Printf("%.1f s wall, peak RSS %.0f MiB\n", time.Since(began).Seconds(), peakRSSMiB())
	})
}

// packingSavings is each policy's node-hours saved against the first's, %.
func packingSavings(results []packsim.Result) []float64 {
	out := make([]float64, len(results))
	for i, r := range results {
		if base := results[0].NodeHours; base > 0 {
			out[i] = 100 * (base - r.NodeHours) / base
		}
	}
	return out
}

func writePackingCSV(path string, results []packsim.Result) error {
	header := []string{"hours"}
	for _, r := range results {
		header = append(header, string(r.Policy)+"_nodes_in_use", string(r.Policy)+"_releasable", string(r.Policy)+"_queued")
	}
	rows := [][]string{header}
	longest := 0
	for _, r := range results {
		longest = max(longest, len(r.Timeline))
	}
	for k := range longest {
		row := []string{""}
		for _, r := range results {
			if k < len(r.Timeline) {
				p := r.Timeline[k]
				row[0] = ftoa(p.Hours) // every timeline samples the same moments from the first arrival
				row = append(row, strconv.Itoa(p.InUse), strconv.Itoa(p.Releasable), strconv.Itoa(p.Queued))
			} else { // a run that ended sooner: everything released
				row = append(row, "0", strconv.Itoa(r.Nodes), "0")
			}
		}
		rows = append(rows, row)
	}
	return writeCSV(path, rows)
}
