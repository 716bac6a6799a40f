package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// schedFlags are harvest-sim sched's settings.
type schedFlags struct {
	preset          string
	explain         bool
	seed            uint64
	seeds           int
	servers, days   int
	historyDays     int
	profiles        string
	noise           float64
	azure, histFile string
	scalings        string
	factors         string
	policies        string
	jobs            string
	swimSeconds     float64
	workers         int
	outputs
	plotGains string
	// overrides of the preset, applied only when given
	cores                      int
	reserve, placement, lost   string
	unlabelled, room           string
	typeByClass                bool
	margin, load, rate, scale  float64
	reuse, constraint, holdUnf bool
	idleRelease                time.Duration
	set                        map[string]bool
}

func schedCommand() cli.CommandFactory {
	var f schedFlags
	return command.Simple{
		Name: "harvest-sim sched", Synopsis: "Simulate a month of harvested DAG jobs under PT and H (and stock) as utilisation rises",
		Usage: "harvest-sim sched [-preset paper|production] [-profiles 0-9|all | -azure DIR | -history FILE] [-seeds 5] [-factors ...] [-json] [-csv F] [-plot F] [-plot-gains F]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.preset, "preset", "paper", "paper (the paper's setup, every value sourced: -explain lists them) or production (the driver's defaults on Nomad)")
			fs.BoolVar(&f.explain, "explain", false, "print the preset's settings and where each comes from, then exit")
			fs.Uint64Var(&f.seed, "seed", 1, "first seed: the datacenter is generated from it, run k of a point uses seed+k")
			fs.IntVar(&f.seeds, "seeds", 0, "runs per operating point, reported as mean, min and max (0: the preset's, 5)")
			fs.IntVar(&f.servers, "servers", 1000, "servers in the simulated datacenter (synthetic or -history)")
			fs.IntVar(&f.days, "days", 30, "simulated days after the history window (with -azure: at most what the trace holds)")
			fs.IntVar(&f.historyDays, "history-days", 0, "days of history the placer classifies before the span (0: the preset's)")
			fs.StringVar(&f.profiles, "profiles", "0", "synthetic datacenter profiles: a list of 0-9, or all")
			fs.Float64Var(&f.noise, "noise", 1, "multiply the synthetic profiles' short-term random variation by this (1: as the profiles define it; a sensitivity check, not a setting of the paper)")
			fs.StringVar(&f.azure, "azure", "", "folder of Azure V1 files (*_avg_*.csv.gz): each VM a tenant of 10 servers, instead of synthetic datacenters")
			fs.StringVar(&f.histFile, "history", "", "tenant history in the long CSV (tenant,timestamp,cpu_percent; .gz too), its tenants sharing -servers, instead of synthetic datacenters")
			fs.StringVar(&f.scalings, "scalings", "linear,root", "utilisation scalings to sweep")
			fs.StringVar(&f.factors, "factors", "0.5,0.75,1,1.25,1.5", "utilisation scaling factors to sweep (linear: x f; root: u^(1/f))")
			fs.StringVar(&f.policies, "policies", "pt,h", "policies to run: pt, h, stock")
			fs.StringVar(&f.jobs, "jobs", "tpcds", "job shapes: tpcds (the TPC-DS-like mix), swim:FILE (a SWIM .tsv) or alibaba:FILE (Alibaba 2017 batch_task.csv[.gz])")
			fs.Float64Var(&f.swimSeconds, "swim-task-seconds", 30, "seconds a SWIM task takes per 64 MiB (SWIM has sizes, not times)")
			fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "runs simulated at once")
			fs.IntVar(&f.cores, "cores", 0, "override: cores per server")
			fs.StringVar(&f.reserve, "reserve", "", "override: kept free for the primary tenant, cores or a percent (as the driver's reserve_cpu)")
			fs.Float64Var(&f.margin, "margin", 0, "override: cores asked for on top of the reserve at admission")
			fs.StringVar(&f.placement, "placement", "", "override: proportional (YARN RM) or binpack2 (Nomad batch)")
			fs.StringVar(&f.unlabelled, "unlabelled", "", "override: placement of requests that name no class: proportional, binpack2 or heartbeat (YARN's default: each heartbeating node filled in turn)")
			fs.StringVar(&f.room, "room", "", "override: a class's room for Algorithm 1: paper (1 - max(level, current) of each server, L150-153) or reserve (what the driver would admit: less the reserve and the harvested work there)")
			fs.BoolVar(&f.typeByClass, "type-by-class", false, "an oracle, never a preset's: type every job by its class in the mix instead of its last duration (the bound of perfect typing)")
			fs.BoolVar(&f.reuse, "container-reuse", false, "override: containers held by the job and reused for its tasks (Tez)")
			fs.DurationVar(&f.idleRelease, "idle-release", 0, "override: how long a reused container waits idle for its job's next task")
			fs.StringVar(&f.lost, "lost-work", "", "override: what a killed container loses: container (every task it ran), task (the running one) or none (a bound: the task goes on elsewhere)")
			fs.BoolVar(&f.constraint, "h-constraint", false, "override: H's classes a constraint (true) or a preference (false)")
			fs.BoolVar(&f.holdUnf, "hold-unfit", false, "override: hold a job that fits no class until one fits (not in the paper)")
			fs.Float64Var(&f.rate, "jobs-per-hour", 0, "override: Poisson arrival rate")
			fs.Float64Var(&f.load, "load", 0, "override: harvested load, share of all cores the jobs' work fills")
			fs.Float64Var(&f.scale, "job-scale", 0, "override: multiply task lengths and stage widths by this (0: derived from the rate and the load)")
			f.register(fs, "write every operating point as CSV", "draw mean job time against utilisation per policy and scaling, one file per source (PNG or SVG)")
			fs.StringVar(&f.plotGains, "plot-gains", "", "draw H's reduction of the mean job time per source, min/average/max over the sweep (the paper's Figure 14)")
		},
		Run: func(_ context.Context, fs *flag.FlagSet) error {
			f.set = map[string]bool{}
			fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
			return runSched(f)
		},
	}.Factory()
}

// schedSource is one set of primary tenants to sweep.
type schedSource struct {
	name    string
	tenants []schedsim.Tenant
	days    int
}

func schedSources(f schedFlags, historyDays int) ([]schedSource, error) {
	switch {
	case f.azure != "":
		ts, days, err := azureTenants(f.azure)
		if err != nil {
			return nil, err
		}
		return []schedSource{{"azure-v1", ts, min(f.days, days-historyDays)}}, nil
	case f.histFile != "":
		ts, days, err := historyTenants(f.histFile, f.servers)
		if err != nil {
			return nil, err
		}
		span := min(f.days, days-historyDays)
		if span < 1 {
			return nil, fmt.Errorf("%s holds too little history: %d days, for %d days of history and a day simulated", f.histFile, days, historyDays)
		}
		fmt.Fprintf(os.Stderr, "%s: simulating %d days after %d days of history\n", f.histFile, span, historyDays)
		return []schedSource{{filepath.Base(f.histFile), ts, span}}, nil
	}
	var profiles []int
	if f.profiles == "all" {
		profiles = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	} else {
		for _, v := range parseList(f.profiles) {
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 || p > 9 {
				return nil, fmt.Errorf("-profiles: %q is not a profile 0-9", v)
			}
			profiles = append(profiles, p)
		}
	}
	var out []schedSource
	all := synth.Profiles(f.seed, max(1, f.servers/6))
	for _, p := range profiles {
		prof := all[p]
		prof.Days, prof.ReimageDays = historyDays+f.days, 1
		name := prof.Name
		if f.noise > 0 && f.noise != 1 {
			prof.Noise *= f.noise
			name += "-noise" + strconv.FormatFloat(f.noise, 'g', -1, 64)
		}
		out = append(out, schedSource{name, schedsim.FromDatacenter(synth.Generate(prof), f.servers), f.days})
	}
	return out, nil
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
		vms, err := readTrace(path, func(r io.Reader) ([]csvfmt.AzureVM, error) { return csvfmt.ParseAzure(r, start) })
		if err != nil {
			return nil, 0, err
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

// historyTenants reads a long CSV. The tenants keep the whole time the file
// covers, from its first sample to its last: a tenant whose history starts
// later joins the cluster then (its series is NaN before, and the simulator
// counts none of its servers until its first sample), one whose history ends
// earlier keeps its last sample to the end. A tenant with less than a day of
// samples is an error that names it. It returns the tenants and the days the
// file covers.
func historyTenants(path string, servers int) ([]schedsim.Tenant, int, error) {
	var rep csvfmt.LongReport
	byTenant, err := readTrace(path, func(r io.Reader) (map[history.TenantID]history.Series, error) {
		s, r2, err := csvfmt.ParseLong(r, csvfmt.LongOptions{})
		rep = r2
		return s, err
	})
	if err != nil {
		return nil, 0, err
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n", path, rep)
	ids, series, err := alignHistories(byTenant)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	days := len(series[0].Values) / history.SlotsPerDay
	late := 0
	for _, s := range series {
		if math.IsNaN(s.Values[0]) {
			late++
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %d tenants, %d days from %s; %d of them join later than the first\n", path, len(ids), days,
		series[0].Start.Format(time.DateOnly), late)
	return schedsim.FromSeries(ids, series, servers), days, nil
}

// alignHistories puts every tenant's series on the span from the earliest
// start to the latest end: NaN before a tenant's first sample, its last
// sample repeated after its end. Tenants with less than a day of samples
// are an error naming them.
func alignHistories(byTenant map[history.TenantID]history.Series) ([]string, []history.Series, error) {
	if len(byTenant) == 0 {
		return nil, nil, fmt.Errorf("no tenant")
	}
	var ids, short []string
	var from, to time.Time
	for id, s := range byTenant {
		ids = append(ids, id.String())
		if len(s.Values) < history.SlotsPerDay {
			short = append(short, fmt.Sprintf("%s (%s)", id, time.Duration(len(s.Values))*history.Slot))
		}
		end := s.Start.Add(time.Duration(len(s.Values)) * history.Slot)
		if from.IsZero() || s.Start.Before(from) {
			from = s.Start
		}
		if end.After(to) {
			to = end
		}
	}
	if count := len(short); count > 0 {
		slices.Sort(short)
		more := ""
		if count > 10 {
			more = fmt.Sprintf(" and %d more", count-10)
			short = short[:10]
		}
		return nil, nil, fmt.Errorf("%d tenants have less than a day of history: %s%s", count, strings.Join(short, ", "), more)
	}
	slices.Sort(ids)
	n := int(to.Sub(from) / history.Slot)
	series := make([]history.Series, len(ids))
	for i, name := range ids {
		id, _ := history.ParseTenantID(name)
		s := byTenant[id]
		v := make([]float64, n)
		skip := int(s.Start.Sub(from) / history.Slot)
		for k := range v {
			switch j := k - skip; {
			case j < 0:
				v[k] = math.NaN()
			case j < len(s.Values):
				v[k] = s.Values[j]
			default:
				v[k] = v[k-1]
			}
		}
		series[i] = history.Series{Start: from, Values: v}
	}
	return ids, series, nil
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

// schedBase is the preset's configuration with the overrides given.
func schedBase(f schedFlags) (schedsim.Preset, error) {
	p, ok := schedsim.Presets()[f.preset]
	if !ok {
		return p, fmt.Errorf("-preset %q: want paper or production", f.preset)
	}
	c := &p.Config
	if f.set["cores"] {
		c.Cores = f.cores
	}
	if f.set["reserve"] || f.set["cores"] && f.reserve != "" {
		r, err := guard.ParseAmount(f.reserve, float64(c.Cores))
		if err != nil {
			return p, fmt.Errorf("-reserve %w", err)
		}
		c.Reserve = r
	}
	if f.set["margin"] {
		c.AdmitMargin = f.margin
	}
	if f.set["placement"] {
		c.Placement = schedsim.Placement(f.placement)
	}
	if f.set["unlabelled"] {
		c.Unlabelled = schedsim.Placement(f.unlabelled)
	}
	if f.set["room"] {
		c.Room = schedsim.RoomRule(f.room)
	}
	if f.set["type-by-class"] {
		c.TypeByClass = f.typeByClass
	}
	if f.set["container-reuse"] {
		c.ContainerReuse = f.reuse
	}
	if f.set["idle-release"] {
		c.IdleRelease = f.idleRelease
	}
	if f.set["lost-work"] {
		c.LostWork = schedsim.LostWork(f.lost)
	}
	if f.set["h-constraint"] {
		c.ClassConstraint = f.constraint
	}
	if f.set["hold-unfit"] {
		c.HoldUnfit = f.holdUnf
	}
	if f.set["jobs-per-hour"] {
		c.JobsPerHour = f.rate
	}
	if f.set["load"] {
		c.OfferedLoad = f.load
	}
	if f.set["job-scale"] {
		c.JobScale = f.scale
	}
	if f.seeds > 0 {
		p.Seeds = f.seeds
	}
	if f.historyDays > 0 {
		p.HistoryDays = f.historyDays
	}
	c.HistoryDays = p.HistoryDays
	return p, nil
}

func runSched(f schedFlags) error {
	preset, err := schedBase(f)
	if err != nil {
		return err
	}
	if f.explain {
		return explainPreset(preset, f)
	}
	if f.set["noise"] && (f.noise <= 0 || f.azure != "" || f.histFile != "") {
		return fmt.Errorf("-noise: %v must be above 0, and applies to the synthetic profiles only", f.noise)
	}
	sources, err := schedSources(f, preset.HistoryDays)
	if err != nil {
		return err
	}
	var factors []float64
	for _, v := range parseList(f.factors) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x <= 0 {
			return fmt.Errorf("-factors: %q is not a factor above 0", v)
		}
		factors = append(factors, x)
	}
	mix, err := schedMix(f)
	if err != nil {
		return err
	}
	var cfgs []schedsim.Config
	for _, src := range sources {
		if src.days < 1 {
			return fmt.Errorf("%s holds too little history for %d days of history and a simulated span", src.name, preset.HistoryDays)
		}
		for _, sc := range parseList(f.scalings) {
			for _, x := range factors {
				for _, pol := range parseList(f.policies) {
					for k := 0; k < preset.Seeds; k++ {
						c := preset.Config
						c.Source, c.Seed, c.Policy, c.Tenants = src.name, f.seed+uint64(k), schedsim.Policy(pol), src.tenants
						c.Span, c.Scaling, c.Factor, c.Mix = time.Duration(src.days)*24*time.Hour, schedsim.Scaling(sc), x, mix
						cfgs = append(cfgs, c)
					}
				}
			}
		}
	}
	began := time.Now()
	results, err := runAll(cfgs, f.workers)
	if err != nil {
		return err
	}
	return reportSched(f, preset, results, time.Since(began))
}

// explainPreset prints the preset's settings and their sources.
func explainPreset(p schedsim.Preset, f schedFlags) error {
	if f.asJSON {
		return command.PrintJSON(os.Stdout, map[string]any{"preset": p.Name, "seeds": p.Seeds, "params": p.Params})
	}
	fmt.Printf("preset %s (%d seeds per point); sources are lines of ../shared/seeds/history-based-harvesting.txt\n", p.Name, p.Seeds)
	for _, q := range p.Params {
		fmt.Printf("  %-22s %s\n  %-22s   %s\n", q.Name, q.Value, "", q.Source)
	}
	return nil
}
