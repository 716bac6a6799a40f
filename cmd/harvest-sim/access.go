package main

import (
	"context"
	"flag"
	"fmt"
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
	"github.com/harvest-platform/harvest/sim/storagesim"
)

// accessFlags are harvest-sim access's settings.
type accessFlags struct {
	seed                                     uint64
	profile, servers, blocks, accesses, days int
	historyDays                              int
	threshold                                float64
	utilisations, replicas, policies         string
	scaling, writers                         string
	steering                                 storagesim.Steering
	fill                                     float64
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
		Usage: "harvest-sim access [-seed N] [-profile 0-9] [-servers N] [-blocks N] [-accesses N] [-utilisations 20,30,...] [-replicas 3,4] " +
			"[-busy-threshold P] [-scaling linear|root] [-hour-candidates N [-steer-first] [-pick-jointly]] [-writers node|client] [-fill F] [-json] [-json-file F] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&f.seed, "seed", 1, "random seed: the same seed gives the same datacenter and reads")
			fs.IntVar(&f.profile, "profile", 9, "synthetic datacenter profile dc-0..dc-9")
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
	if f.profile < 0 || f.profile > 9 {
		return fmt.Errorf("-profile %d: want 0-9", f.profile)
	}
	if f.days < 1 || f.historyDays < 1 {
		return fmt.Errorf("want at least one day of history and one of reads")
	}
	replicas, err := splitInts("replicas", f.replicas)
	if err != nil {
		return err
	}
	policies, err := splitPolicies(f.policies)
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
	writers, err := storagesim.ParseWriters(f.writers)
	if err != nil {
		return fmt.Errorf("-writers: %w", err)
	}
	began := time.Now()
	p := withServers(synth.Profiles(f.seed, 1)[f.profile], f.servers)
	p.Days = f.historyDays + f.days
	dc := synth.Generate(p)
	points, err := storagesim.Availability(dc, storagesim.AccessConfig{Seed: f.seed, Blocks: f.blocks, Accesses: f.accesses,
		Utilisations: utils, BusyThreshold: f.threshold, Scaling: storagesim.Scaling(f.scaling), HistoryDays: f.historyDays,
		Steering: f.steering, Writers: writers, Fill: f.fill},
		policies, replicas, func(done, total int) {
			label := p.Name
			if done < total {
				label = fmt.Sprintf("%s at %.0f%%", p.Name, utils[done])
			}
			progressBar(label, done, total)
		})
	if err != nil {
		return err
	}
	wall, rss := time.Since(began).Seconds(), peakRSSMiB()
	clean := cleanUpTo(points)
	summary := map[string]any{"seed": f.seed, "datacenter": p.Name, "scaling": f.scaling,
		"busy_threshold": f.threshold, "blocks": f.blocks, "accesses": f.accesses, "days": f.days, "points": points,
		"no_failed_reads_up_to": clean, "wall_seconds": wall, "peak_rss_mib": rss}
	csv := func(path string) error { return writeAccessCSV(path, points) }
	plot := func(path string) error {
		title := fmt.Sprintf("Reads finding every replica busy (%s, %s scaling, busy at %.0f%%)", p.Name, f.scaling, f.threshold)
		return plots.Lines(path, title, "mean primary-tenant utilisation (%)", "failed reads (%)", accessSeries(points))
	}
	return f.emit(summary, csv, plot, func() {
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "UTILISATION %%\tBUSY SERVERS %%\tPOLICY\tR\tFAILED READS\tFAILED %%\tOF THEM ON A LONE BUSY SLOT\tMOST LOADED SERVER / MEAN\n")
		for _, pt := range points {
			fmt.Fprintf(tw, "%.0f\t%.1f\t%s\t%d\t%d\t%.4f\t%d\t%.2f\n", pt.Utilisation, pt.BusyPct, pt.Policy, pt.Replicas, pt.Failed, pt.FailedPct, pt.FailedOnLoneSlot, pt.MostLoaded)
		}
		tw.Flush()
		for _, s := range accessSeries(points) {
			if clean[s.Name] == 0 {
				fmt.Printf("%s: failed reads already at %.0f%% utilisation, the lowest swept\n", s.Name, s.X[0])
			} else {
				fmt.Printf("%s: no failed read up to %.0f%% utilisation\n", s.Name, clean[s.Name])
			}
		}
		servers := 0
		for _, t := range dc.Tenants {
			servers += len(t.Nodes)
		}
		fmt.Printf("%s, %d servers: %.1f s wall, peak RSS %.0f MiB\n", p.Name, servers, wall, rss)
	})
}

// accessSeries is Figure 16's curves: failed reads against utilisation,
// one per policy and R.
func accessSeries(points []storagesim.AccessPoint) []plots.Series {
	by := map[string]*plots.Series{}
	var order []string
	for _, pt := range points {
		name := fmt.Sprintf("%s R=%d", pt.Policy, pt.Replicas)
		if by[name] == nil {
			by[name] = &plots.Series{Name: name}
			order = append(order, name)
		}
		by[name].X = append(by[name].X, pt.Utilisation)
		by[name].Y = append(by[name].Y, pt.FailedPct)
	}
	out := make([]plots.Series, 0, len(order))
	for _, n := range order {
		out = append(out, *by[n])
	}
	return out
}

// cleanUpTo is, per curve, the highest utilisation below which no read
// failed (0 when the lowest already saw failures).
func cleanUpTo(points []storagesim.AccessPoint) map[string]float64 {
	out := map[string]float64{}
	for _, s := range accessSeries(points) {
		out[s.Name] = 0
		for i := range s.X { // the sweep's order
			if s.Y[i] > 0 {
				break
			}
			out[s.Name] = s.X[i]
		}
	}
	return out
}

func writeAccessCSV(path string, points []storagesim.AccessPoint) error {
	rows := [][]string{{"datacenter", "policy", "replicas", "utilisation", "busy_server_percent", "accesses", "failed", "failed_percent", "failed_on_lone_busy_slot", "most_loaded_server_vs_mean"}}
	for _, pt := range points {
		rows = append(rows, []string{pt.Datacenter, string(pt.Policy), strconv.Itoa(pt.Replicas), strconv.FormatFloat(pt.Utilisation, 'g', 6, 64),
			strconv.FormatFloat(pt.BusyPct, 'f', 3, 64), strconv.Itoa(pt.Accesses), strconv.Itoa(pt.Failed),
			strconv.FormatFloat(pt.FailedPct, 'g', 6, 64), strconv.Itoa(pt.FailedOnLoneSlot), strconv.FormatFloat(pt.MostLoaded, 'f', 3, 64)})
	}
	return writeCSV(path, rows)
}
