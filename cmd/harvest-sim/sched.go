package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// schedFlags are harvest-sim sched's settings.
type schedFlags struct {
	seed                     uint64
	servers, days, profile   int
	azure, scalings, factors string
	policies                 string
	load                     float64
	outputs
	cores, taskCores int
	reserve          string
	workers          int
	classConstraint  bool
	noHistoryRanking bool
	noMargin         bool
	jobs             string
	swimSeconds      float64
}

func schedCommand() cli.CommandFactory {
	var f schedFlags
	return command.Simple{
		Name: "harvest-sim sched", Synopsis: "Simulate a month of harvested batch jobs under stock, PT and H scheduling as load rises",
		Usage: "harvest-sim sched [-servers N] [-profile 0-9 | -azure DIR] [-scalings linear,root] [-factors 1,1.5,2] [-json] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&f.seed, "seed", 1, "random seed: the same seed gives the same datacenter, jobs and run")
			fs.IntVar(&f.servers, "servers", 2000, "servers in the synthetic datacenter")
			fs.IntVar(&f.days, "days", 30, "simulated days after the 8-day history the placer classifies (with -azure: at most what the trace holds)")
			fs.IntVar(&f.profile, "profile", 0, "synthetic datacenter profile dc-0..dc-9")
			fs.StringVar(&f.azure, "azure", "", "folder of Azure V1 files (*_avg_*.csv.gz): each VM a tenant of 10 servers, instead of a synthetic datacenter")
			fs.StringVar(&f.scalings, "scalings", "linear,root", "utilisation scalings to sweep")
			fs.StringVar(&f.factors, "factors", "1,1.5,2,2.5,3", "scaling factors to sweep")
			fs.StringVar(&f.policies, "policies", "stock,pt,h", "policies to run")
			fs.Float64Var(&f.load, "load", 0.1, "offered harvested load: share of all cores the jobs' task-seconds would fill")
			fs.StringVar(&f.jobs, "jobs", "tpcds", "job shapes: tpcds (the TPC-DS-like mix), swim:FILE (a SWIM .tsv) or alibaba:FILE (Alibaba 2017 batch_task.csv[.gz])")
			fs.Float64Var(&f.swimSeconds, "swim-task-seconds", 30, "seconds a SWIM task takes per 64 MiB (SWIM has sizes, not times)")
			fs.IntVar(&f.cores, "cores", 16, "cores per server")
			fs.StringVar(&f.reserve, "reserve", guard.DefaultReserveCPU, "kept free for the primary tenant: cores or a percent of the server, as the driver's reserve_cpu")
			fs.IntVar(&f.taskCores, "task-cores", 1, "run every N one-core tasks of a stage as one N-core container (the paper's scaling of container usage for large datacenters)")
			fs.BoolVar(&f.classConstraint, "h-constraint", false, "H: make Algorithm 1's classes a hard constraint (as the proxy writes them) rather than a preference")
			fs.BoolVar(&f.noHistoryRanking, "h-no-history-ranking", false, "H: do not rank servers by the room their class's history leaves for the job's type")
			fs.BoolVar(&f.noMargin, "no-margin", false, "drop the driver's one-core admission margin (PT and H)")
			fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "runs simulated at once")
			f.register(fs, "write the curves as CSV", "draw mean job time against utilisation per policy and scaling (PNG or SVG)")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error { return runSched(f) },
	}.Factory()
}

const historyDays = 8

func schedTenants(f schedFlags) ([]schedsim.Tenant, string, int, error) {
	if f.azure != "" {
		ts, days, err := azureTenants(f.azure)
		return ts, "azure-v1", min(f.days, days-historyDays), err // the trace holds about 19 days after the history
	}
	if f.profile < 0 || f.profile > 9 {
		return nil, "", 0, fmt.Errorf("-profile %d: want 0-9", f.profile)
	}
	p := synth.Profiles(f.seed, max(1, f.servers/6))[f.profile]
	p.Days, p.ReimageDays = historyDays+f.days, 1
	out := schedsim.FromDatacenter(synth.Generate(p), f.servers)
	return out, p.Name, f.days, nil
}

func azureTenants(dir string) ([]schedsim.Tenant, int, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*_avg_*.csv.gz"))
	if len(files) == 0 {
		return nil, 0, fmt.Errorf("no *_avg_*.csv.gz files in %s", dir)
	}
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	var out []schedsim.Tenant
	minSlots := -1
	for _, path := range files {
		fh, err := os.Open(path)
		if err != nil {
			return nil, 0, err
		}
		vms, err := csvfmt.ParseAzure(fh, start) // gunzips by itself
		fh.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		for _, vm := range vms {
			out = append(out, schedsim.Tenant{ID: vm.Tenant.String() + "@" + filepath.Base(path), Servers: 10, Series: vm.Series})
			if minSlots < 0 || len(vm.Series.Values) < minSlots {
				minSlots = len(vm.Series.Values)
			}
		}
	}
	return out, minSlots / history.SlotsPerDay, nil
}

// schedMix is the workload -jobs names.
func schedMix(f schedFlags) (schedsim.Mix, error) {
	kind, path, _ := strings.Cut(f.jobs, ":")
	if kind == "tpcds" {
		return schedsim.TPCDSMix(), nil
	}
	if path == "" || kind != "swim" && kind != "alibaba" {
		return schedsim.Mix{}, fmt.Errorf("-jobs %q: want tpcds, swim:FILE or alibaba:FILE", f.jobs)
	}
	parse := schedsim.ParseAlibaba
	if kind == "swim" {
		parse = func(r io.Reader) ([]schedsim.TraceJob, error) { return schedsim.ParseSWIM(r, f.swimSeconds) }
	}
	trace, err := readTrace(path, parse)
	if err != nil {
		return schedsim.Mix{}, err
	}
	return schedsim.Mix{Trace: trace}, nil
}

func parseList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func runSched(f schedFlags) error {
	tenants, source, days, err := schedTenants(f)
	if err != nil {
		return err
	}
	if days < 1 {
		return fmt.Errorf("%s holds too little history for %d days of history and a simulated span", source, historyDays)
	}
	var factors []float64
	for _, v := range parseList(f.factors) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 1 {
			return fmt.Errorf("-factors: %q is not a factor >= 1", v)
		}
		factors = append(factors, x)
	}
	reserve, err := guard.ParseAmount(f.reserve, float64(f.cores))
	if err != nil {
		return fmt.Errorf("-reserve %w", err)
	}
	mix, err := schedMix(f)
	if err != nil {
		return err
	}
	var cfgs []schedsim.Config
	for _, sc := range parseList(f.scalings) {
		for _, x := range factors {
			for _, p := range parseList(f.policies) {
				cfgs = append(cfgs, schedsim.Config{Seed: f.seed, Policy: schedsim.Policy(p), Tenants: tenants,
					HistoryDays: historyDays, Span: time.Duration(days) * 24 * time.Hour, Scaling: schedsim.Scaling(sc), Factor: x,
					OfferedLoad: f.load, Mix: mix, Cores: f.cores, Reserve: reserve, TaskCores: f.taskCores,
					ClassConstraint: f.classConstraint, NoHistoryRanking: f.noHistoryRanking, NoMargin: f.noMargin})
			}
		}
	}
	began := time.Now()
	results, err := runAll(cfgs, f.workers)
	if err != nil {
		return err
	}
	peak := uint64(peakRSSMiB() * (1 << 20))
	gains := reductions(results)
	summary := map[string]any{"seed": f.seed, "source": source, "days": days, "servers": results[0].Servers,
		"offered_load": f.load, "jobs": f.jobs, "task_cores": f.taskCores, "cores": f.cores, "reserve_cores": reserve,
		"results": results, "wall_seconds": time.Since(began).Seconds(), "peak_rss_bytes": peak, "workers": f.workers,
		"h_vs_pt_mean_job_time_reduction": gains}
	csv := func(path string) error { return writeSchedCSV(path, results) }
	plot := func(path string) error { return plotSched(path, source, results) }
	return f.emit(summary, csv, plot, func() {
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "SCALING\tFACTOR\tPOLICY\tPRIMARY %%\tUTIL %%\tJOBS\tMEAN s\tP99 s\tEVICTED\tWASTED core-h\tRESERVE OVERRUN %%\tUNFINISHED\n")
		for _, r := range results {
			fmt.Fprintf(tw, "%s\t%g\t%s\t%.1f\t%.1f\t%d\t%.0f\t%.0f\t%d\t%.1f\t%.3f\t%d\n", r.Scaling, r.Factor, r.Policy, 100*r.PrimaryUtil,
				100*r.Utilisation, r.Jobs, r.MeanJobSeconds, r.P99JobSeconds, r.Evicted, r.WastedTaskSeconds/3600, 100*r.OverrunShare, r.Unfinished)
		}
		tw.Flush()
		for _, k := range slices.Sorted(maps.Keys(gains)) {
			fmt.Printf("H vs PT mean job time, %s: %.1f%% shorter\n", k, gains[k])
		}
		fmt.Printf("%s, %d servers, %d days, %d runs on %d workers: %.0f s wall, peak RSS %.0f MiB\n", source, results[0].Servers, days,
			len(results), f.workers, time.Since(began).Seconds(), float64(peak)/(1<<20))
	})
}

// reductions is H's mean job time against PT's, per scaling and factor.
func reductions(results []schedsim.Result) map[string]float64 {
	pt := map[string]float64{}
	out := map[string]float64{}
	key := func(r schedsim.Result) string { return fmt.Sprintf("%s x%g", r.Scaling, r.Factor) }
	for _, r := range results {
		if r.Policy == schedsim.PT {
			pt[key(r)] = r.MeanJobSeconds
		}
	}
	for _, r := range results {
		if v, ok := pt[key(r)]; r.Policy == schedsim.History && ok && v > 0 {
			out[key(r)] = 100 * (v - r.MeanJobSeconds) / v
		}
	}
	return out
}

func writeSchedCSV(path string, results []schedsim.Result) error {
	rows := [][]string{{"scaling", "factor", "policy", "primary_utilisation", "utilisation", "jobs", "mean_job_seconds",
		"p99_job_seconds", "tasks_evicted", "wasted_task_seconds", "reserve_overrun_share", "unfinished"}}
	for _, r := range results {
		rows = append(rows, []string{string(r.Scaling), ftoa(r.Factor), string(r.Policy), ftoa(r.PrimaryUtil), ftoa(r.Utilisation),
			strconv.Itoa(r.Jobs), ftoa(r.MeanJobSeconds), ftoa(r.P99JobSeconds), strconv.Itoa(r.Evicted),
			ftoa(r.WastedTaskSeconds), ftoa(r.OverrunShare), strconv.Itoa(r.Unfinished)})
	}
	return writeCSV(path, rows)
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func plotSched(path, source string, results []schedsim.Result) error {
	bySeries := map[string]*plots.Series{}
	var order []string
	for _, r := range results {
		name := fmt.Sprintf("%s (%s)", r.Policy, r.Scaling)
		if bySeries[name] == nil {
			bySeries[name] = &plots.Series{Name: name}
			order = append(order, name)
		}
		bySeries[name].X = append(bySeries[name].X, 100*r.PrimaryUtil)
		bySeries[name].Y = append(bySeries[name].Y, r.MeanJobSeconds)
	}
	var series []plots.Series
	for _, n := range order {
		series = append(series, *bySeries[n])
	}
	return plots.Lines(path, "Mean job time as primary utilisation rises ("+source+")", "primary tenants' utilisation (%)", "mean job time (s)", series)
}
