package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/schedsim"
	"github.com/harvest-platform/harvest/sim/storagesim"
)

// accessFlags are harvest-sim access's settings.
type accessFlags struct {
	seed                                  uint64
	profiles                              string
	servers, blocks, accesses, days, runs int
	historyDays                           int
	threshold                             float64
	utilisations, replicas, policies      string
	scaling, writers                      string
	steering                              storagesim.Steering
	fill                                  float64
	outputs
}

// registerSteering adds the blob front's placement beyond Algorithm 2
// (-hour-candidates, -steer-first, -pick-jointly) to access or storage;
// busyWhen says which history the busy hours come from.
func registerSteering(fs *flag.FlagSet, s *storagesim.Steering, busyWhen string) {
	fs.IntVar(&s.HourCandidates, "hour-candidates", 0, "beyond the paper: compare this many tenants of each chosen grid cell by the hours "+
		busyWhen+" and keep the one least often busy with the block's other replicas (0 or 1: Algorithm 2's random pick; the blob front's placement.hour_candidates)")
	fs.BoolVar(&s.SteerFirst, "steer-first", false, "beyond the paper: with -hour-candidates, compare the candidates for a block's first replica too "+
		"(the tenant least often busy at all) when no writer's server takes it (the blob front's placement.steer_first)")
	fs.BoolVar(&s.PickJointly, "pick-jointly", false, "beyond the paper: with -hour-candidates, draw the candidates of the replicas that complete a round of the grid together and keep "+
		"the combination least often all busy at the same hour, instead of one pick at a time (the blob front's placement.pick_jointly)")
}

// writersUsage explains -writers of access and storage.
const writersUsage = "who writes blocks: node (a random storage server, whose own server takes the first replica: Algorithm 2 lines 6-7, the paper's) " +
	"or client (writers are not storage servers, as the blob front's S3 clients: Algorithm 2 picks every replica)"

func accessCommand() cli.CommandFactory {
	var f accessFlags
	return command.Simple{
		Name: "harvest-sim access", Synopsis: "Simulate reads as utilisation rises: the share that finds every replica busy, stock HDFS placement against Algorithm 2",
		Usage: "harvest-sim access [-seed N] [-profiles all|0-9|0,3] [-runs N] [-servers N] [-blocks N] [-accesses N] [-utilisations 20,30,...] [-replicas 3,4] " +
			"[-busy-threshold P] [-scaling linear|root] [-hour-candidates N [-steer-first] [-pick-jointly]] [-writers node|client] [-fill F] [-json] [-json-file F] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&f.seed, "seed", 1, "random seed: the same seed gives the same datacenter and reads")
			fs.StringVar(&f.profiles, "profiles", "9", "synthetic datacenter profiles dc-0..dc-9: all, a range 0-9 or a list 0,3,5")
			fs.StringVar(&f.profiles, "profile", "9", "the same as -profiles")
			fs.IntVar(&f.runs, "runs", 1, "runs per point, each placing and reading with its own seed (seed, seed+1, ...) on the datacenter -seed draws: "+
				"the plot's bars show their min and max, as the paper's Figure 16 (five runs, L344)")
			fs.IntVar(&f.servers, "servers", 2000, "servers in the synthetic datacenter (about: tenants come whole)")
			fs.IntVar(&f.blocks, "blocks", 50000, "blocks placed before the reads")
			fs.IntVar(&f.accesses, "accesses", 500000, "reads per policy, replication and utilisation")
			fs.IntVar(&f.days, "days", 30, "days of reads (the paper simulates a month)")
			fs.IntVar(&f.historyDays, "history-days", 30, "days of utilisation before the reads that give the grid each tenant's peak (blobd takes the 95th percentile of 30 days)")
			fs.StringVar(&f.utilisations, "utilisations", "20,25,30,35,40,45,50,55,60,70,80", "mean primary-tenant utilisations (percent) to sweep")
			fs.StringVar(&f.replicas, "replicas", "3,4", "replication levels")
			fs.StringVar(&f.policies, "policies", "stock,grid", "placement policies: stock, grid")
			fs.Float64Var(&f.threshold, "busy-threshold", storagesim.DefaultBusyThreshold(),
				"a server is busy at or above this utilisation (percent): the driver's default, the edge of its 33% CPU reserve")
			fs.StringVar(&f.scaling, "scaling", "linear", "how utilisation is scaled: linear (saturating at 100%) or root")
			registerSteering(fs, &f.steering, "they were busy in the history days")
			fs.StringVar(&f.writers, "writers", string(storagesim.NodeWriters), writersUsage)
			fs.Float64Var(&f.fill, "fill", 0, "share of the servers' space the blocks fill (bounds how many replicas a server holds; 0: no limit)")
			f.register(fs, "write the curves as CSV", "draw failed reads against utilisation, as the paper's Figure 16 (PNG or SVG)")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error { return runAccess(f) },
	}.Factory()
}

func runAccess(f accessFlags) error {
	if f.scaling != string(storagesim.Linear) && f.scaling != string(storagesim.Root) {
		return fmt.Errorf("-scaling %q: want linear or root", f.scaling)
	}
	idx, err := parseProfiles(f.profiles)
	if err != nil {
		return err
	}
	if f.runs < 1 {
		return fmt.Errorf("-runs %d: want at least one run", f.runs)
	}
	if f.days < 1 || f.historyDays < 1 {
		return fmt.Errorf("want at least one day of history and one of reads")
	}
	replicas, policies, err := replicasAndPolicies(f.replicas, f.policies)
	if err != nil {
		return err
	}
	var utils []float64
	for _, v := range strings.Split(f.utilisations, ",") {
		u, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || u <= 0 || u >= 100 {
			return fmt.Errorf("-utilisations: %q is not a percentage between 0 and 100", v)
		}
		utils = append(utils, u)
	}
	slices.Sort(utils)
	utils = slices.Compact(utils)
	slices.Sort(replicas)
	replicas = slices.Compact(replicas)
	writers, err := storagesim.ParseWriters(f.writers)
	if err != nil {
		return fmt.Errorf("-writers: %w", err)
	}
	began := time.Now()
	var points []storagesim.AccessPoint
	var names []string
	servers := 0
	profiles := synth.Profiles(f.seed, 1)
	for k, i := range idx {
		p := withServers(profiles[i], f.servers)
		p.Days = f.historyDays + f.days
		dc := synth.Generate(p)
		names = append(names, p.Name)
		for _, t := range dc.Tenants {
			servers += len(t.Nodes)
		}
		for run := 0; run < f.runs; run++ {
			pts, err := storagesim.Availability(dc, storagesim.AccessConfig{Seed: f.seed + uint64(run), Blocks: f.blocks, Accesses: f.accesses,
				Utilisations: utils, BusyThreshold: f.threshold, Scaling: storagesim.Scaling(f.scaling), HistoryDays: f.historyDays,
				Steering: f.steering, Writers: writers, Fill: f.fill},
				policies, replicas, func(done, total int) {
					label := fmt.Sprintf("%s run %d/%d", p.Name, run+1, f.runs)
					if done < total {
						label = fmt.Sprintf("%s at %.0f%%", label, utils[done])
					}
					progressBar(label, (k*f.runs+run)*total+done, len(idx)*f.runs*total)
				})
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			points = append(points, pts...)
		}
	}
	wall, rss := time.Since(began).Seconds(), peakRSSMiB()
	series := accessSeries(points)
	clean := cleanUpTo(series)
	byDC := map[string]map[string]float64{}
	for _, name := range names {
		var own []storagesim.AccessPoint
		for _, pt := range points {
			if pt.Datacenter == name {
				own = append(own, pt)
			}
		}
		byDC[name] = cleanUpTo(accessSeries(own))
	}
	summary := map[string]any{"seed": f.seed, "runs": f.runs, "datacenters": names, "scaling": f.scaling,
		"busy_threshold": f.threshold, "blocks": f.blocks, "accesses": f.accesses, "days": f.days, "points": points,
		"curves": series, "no_failed_reads_up_to": clean, "no_failed_reads_up_to_by_datacenter": byDC,
		"wall_seconds": wall, "peak_rss_mib": rss}
	csv := func(path string) error { return writeAccessCSV(path, f.seed, points) }
	plot := func(path string) error {
		title := fmt.Sprintf("Reads finding every replica busy (%s, %s scaling, busy at %.0f%%)", strings.Join(names, ", "), f.scaling, f.threshold)
		if len(names) > 3 {
			title = fmt.Sprintf("Reads finding every replica busy (%d datacenters, %s scaling, busy at %.0f%%)", len(names), f.scaling, f.threshold)
		}
		drawn := slices.Clone(series)
		for i := range drawn {
			if f.runs == 1 { // one run: no range to draw
				drawn[i].Low, drawn[i].High = nil, nil
			}
		}
		return plots.Lines(path, title, "mean primary-tenant utilisation (%)", "failed reads (%)", drawn)
	}
	return f.emit(summary, csv, plot, func() {
		printAccessTable(os.Stdout, points, f.runs)
		for _, s := range series {
			if clean[s.Name] == 0 {
				fmt.Printf("%s: failed reads already at %.0f%% utilisation, the lowest swept\n", s.Name, s.X[0])
			} else {
				fmt.Printf("%s: no failed read up to %.0f%% utilisation\n", s.Name, clean[s.Name])
			}
		}
		if len(names) > 1 {
			for _, s := range series {
				var each []string
				for _, name := range names {
					each = append(each, fmt.Sprintf("%s %.0f%%", name, byDC[name][s.Name]))
				}
				fmt.Printf("%s, no failed read up to, per datacenter (0%%: failed at the lowest swept): %s\n", s.Name, strings.Join(each, ", "))
			}
		}
		fmt.Printf("%s, %d servers in all, %d run(s) each: %.1f s wall, peak RSS %.0f MiB\n", strings.Join(names, ", "), servers, f.runs, wall, rss)
	})
}

// accessSeries is Figure 16's curves, one per policy and R: at each
// utilisation the share of failed reads over every datacenter of a run,
// its mean over the runs, and the runs' min and max as the bars.
func accessSeries(points []storagesim.AccessPoint) []plots.Series {
	type key struct {
		util float64
		run  uint64
	}
	type tally struct{ failed, accesses int }
	by := map[string]map[key]*tally{}
	var order []string
	for _, pt := range points {
		name := fmt.Sprintf("%s R=%d", pt.Policy, pt.Replicas)
		if by[name] == nil {
			by[name] = map[key]*tally{}
			order = append(order, name)
		}
		k := key{pt.Utilisation, pt.RunSeed}
		if by[name][k] == nil {
			by[name][k] = &tally{}
		}
		by[name][k].failed += pt.Failed
		by[name][k].accesses += pt.Accesses
	}
	out := make([]plots.Series, 0, len(order))
	for _, name := range order {
		runs := map[float64][]float64{}
		for k, t := range by[name] {
			runs[k.util] = append(runs[k.util], 100*float64(t.failed)/float64(t.accesses))
		}
		s := plots.Series{Name: name}
		for _, u := range slices.Sorted(maps.Keys(runs)) {
			st := schedsim.StatOf(runs[u])
			s.X, s.Y = append(s.X, u), append(s.Y, st.Mean)
			s.Low, s.High = append(s.Low, st.Min), append(s.High, st.Max)
		}
		out = append(out, s)
	}
	return out
}

// cleanUpTo is, per curve, the highest utilisation below which no read
// failed in any run (0 when the lowest already saw failures).
func cleanUpTo(series []plots.Series) map[string]float64 {
	out := map[string]float64{}
	for _, s := range series {
		out[s.Name] = 0
		for i := range s.X { // ascending
			if s.High[i] > 0 {
				break
			}
			out[s.Name] = s.X[i]
		}
	}
	return out
}

// printAccessTable prints a row per datacenter, utilisation, policy and R:
// with several runs, the failed reads' mean (min-max) over them, the mean
// of the rest, and the most loaded server of any run.
func printAccessTable(w io.Writer, points []storagesim.AccessPoint, runs int) {
	type key struct {
		dc     string
		util   float64
		policy storagesim.Policy
		r      int
	}
	group := map[key][]storagesim.AccessPoint{}
	var order []key
	for _, pt := range points {
		k := key{pt.Datacenter, pt.Utilisation, pt.Policy, pt.Replicas}
		if group[k] == nil {
			order = append(order, k)
		}
		group[k] = append(group[k], pt)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "DATACENTER\tUTILISATION %%\tBUSY SERVERS %%\tPOLICY\tR\tFAILED READS\tFAILED %%\tOF THEM ON A LONE BUSY SLOT\tMOST LOADED SERVER / MEAN\n")
	for _, k := range order {
		var failed, pct, busy, lone, most []float64
		for _, pt := range group[k] {
			failed, pct, busy = append(failed, float64(pt.Failed)), append(pct, pt.FailedPct), append(busy, pt.BusyPct)
			lone, most = append(lone, float64(pt.FailedOnLoneSlot)), append(most, pt.MostLoaded)
		}
		f, l := schedsim.StatOf(failed), schedsim.StatOf(lone)
		count, loneCount := fmt.Sprintf("%.0f", f.Mean), fmt.Sprintf("%.0f", l.Mean)
		if runs > 1 {
			count, loneCount = fmt.Sprintf("%.1f (%.0f-%.0f)", f.Mean, f.Min, f.Max), fmt.Sprintf("%.1f", l.Mean)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%s\t%d\t%s\t%.4f\t%s\t%.2f\n", k.dc, k.util, schedsim.StatOf(busy).Mean, k.policy, k.r, count,
			schedsim.StatOf(pct).Mean, loneCount, schedsim.StatOf(most).Max)
	}
	tw.Flush()
}

func writeAccessCSV(path string, seed uint64, points []storagesim.AccessPoint) error {
	rows := [][]string{{"datacenter", "datacenter_seed", "run_seed", "policy", "replicas", "utilisation", "busy_server_percent", "accesses", "failed", "failed_percent", "failed_on_lone_busy_slot", "most_loaded_server_vs_mean"}}
	for _, pt := range points {
		rows = append(rows, []string{pt.Datacenter, strconv.FormatUint(seed, 10), strconv.FormatUint(pt.RunSeed, 10), string(pt.Policy), strconv.Itoa(pt.Replicas), strconv.FormatFloat(pt.Utilisation, 'g', 6, 64),
			strconv.FormatFloat(pt.BusyPct, 'f', 3, 64), strconv.Itoa(pt.Accesses), strconv.Itoa(pt.Failed),
			strconv.FormatFloat(pt.FailedPct, 'g', 6, 64), strconv.Itoa(pt.FailedOnLoneSlot), strconv.FormatFloat(pt.MostLoaded, 'f', 3, 64)})
	}
	return writeCSV(path, rows)
}
