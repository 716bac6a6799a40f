package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/storagesim"
)

// storageFlags are harvest-sim storage's settings.
type storageFlags struct {
	seed                           uint64
	profiles, replicas, policies   string
	servers, blocks, runs, history int
	repair, fill                   float64
	reimages, inventory, lifetimes string
	repairOrder, writers           string
	repairLimit                    string
	steering                       storagesim.Steering
	outputs
}

func storageCommand() cli.CommandFactory {
	var f storageFlags
	return command.Simple{
		Name: "harvest-sim storage", Synopsis: "Simulate a year of reimages: blocks lost per datacenter under stock HDFS placement and Algorithm 2",
		Usage: "harvest-sim storage [-seed N] [-profiles all|0-9|0,3] [-servers N] [-blocks N] [-replicas 3,4] [-repair-rate 30] [-repair-order survivors|risk] [-repair-limit reimaged|receiver] [-writers node|client] [-fill F] " +
			"[-hour-candidates N [-steer-first] [-pick-jointly]] " +
			"[-runs N] [-reimages FILE.csv [-inventory FILE.csv] | -lifetimes FILE.csv] [-json] [-json-file F] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&f.seed, "seed", 1, "random seed: the same seed gives the same datacenters and runs")
			fs.StringVar(&f.profiles, "profiles", "all", "synthetic datacenter profiles: all, a range 0-9 or a list 0,3,5")
			fs.IntVar(&f.servers, "servers", 1000, "servers in each synthetic datacenter (about: tenants come whole)")
			fs.IntVar(&f.blocks, "blocks", 100000, "blocks written over the simulated year (the paper: 4000000)")
			fs.StringVar(&f.replicas, "replicas", "3,4", "replication levels")
			fs.StringVar(&f.policies, "policies", "stock,grid", "placement policies: stock, grid")
			fs.Float64Var(&f.repair, "repair-rate", 30, "replicas re-created per hour per reimaged server")
			fs.StringVar(&f.repairOrder, "repair-order", storagesim.RepairBySurvivors, "order of a reimaged server's repairs: survivors (fewest surviving replicas first, as HDFS) or risk (then the survivors' tenants' reimage rates, as the blob repairer)")
			fs.Float64Var(&f.fill, "fill", 0.5, "share of the harvestable space the year's replicas fill (sets each server's capacity; 0: unlimited)")
			fs.IntVar(&f.history, "history-days", 365, "days of reimages before the simulated year that give the grid each tenant's reimage rate")
			fs.IntVar(&f.runs, "runs", 1, "runs per datacenter, policy and replication (seeds seed, seed+1, ...): the bars show their mean, min and max")
			fs.StringVar(&f.reimages, "reimages", "", "replay this reimage CSV (tenant,node,timestamp) instead of synthetic datacenters; its first -history-days days are history")
			fs.StringVar(&f.inventory, "inventory", "", "with -reimages: every server (tenant,node,rack; rack may be empty), so that nodes never reimaged count too (without it the servers are the nodes that had an event)")
			fs.StringVar(&f.lifetimes, "lifetimes", "", "replay this disk log instead (tenant,node,rack,disk,first_seen,last_seen,failed: every data disk each server had): "+
				"a failure wipes its server, a server is in service from its first disk's first sighting to its last disk's last, and one that leaves is drained first; its first -history-days days are history")
			fs.StringVar(&f.writers, "writers", string(storagesim.NodeWriters), writersUsage)
			registerSteering(fs, &f.steering, "at which a synthetic tenant's series was at or above 67% (no hours from -reimages or -lifetimes: every tenant ties)")
			fs.StringVar(&f.repairLimit, "repair-limit", storagesim.RepairLimitReimaged, "what -repair-rate limits: reimaged (each reimaged server's lost replicas, "+
				"in its own queue) or receiver (each live server receives at most the rate, from one queue of the datacenter's blocks, as the blob repairer)")
			f.register(fs, "write every run as CSV", "draw lost blocks per datacenter, policy and replication, as the paper's Figure 15 (PNG or SVG)")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error { return runStorage(f) },
	}.Factory()
}

// storageInputs yields the datacenters to replay, one at a time (a big one
// is dropped before the next is generated).
func storageInputs(f storageFlags) (names []string, load func(i int) (storagesim.Datacenter, error), err error) {
	if f.lifetimes != "" {
		if f.reimages != "" || f.inventory != "" {
			return nil, nil, errors.New("-lifetimes is the disk log and the inventory at once: give it without -reimages and -inventory")
		}
		dc, err := lifetimesInput(f.lifetimes, f.history)
		if err != nil {
			return nil, nil, err
		}
		return []string{dc.Name}, func(int) (storagesim.Datacenter, error) { return dc, nil }, nil
	}
	if f.reimages != "" {
		fh, err := os.Open(f.reimages)
		if err != nil {
			return nil, nil, err
		}
		defer fh.Close()
		events, err := csvfmt.ParseReimages(fh)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.reimages, err)
		}
		var first time.Time
		for _, evs := range events {
			for _, r := range evs {
				if first.IsZero() || r.Time.Before(first) {
					first = r.Time
				}
			}
		}
		dc := storagesim.FromReimages(f.reimages, events, first.Truncate(24*time.Hour), f.history)
		if f.inventory != "" {
			inv, err := readInventory(f.inventory)
			if err != nil {
				return nil, nil, err
			}
			if dc, err = storagesim.FromInventory(f.reimages, inv, events, first.Truncate(24*time.Hour), f.history); err != nil {
				return nil, nil, fmt.Errorf("%s with %s: %w", f.reimages, f.inventory, err)
			}
		}
		if len(dc.Reimages) == 0 {
			return nil, nil, fmt.Errorf("%s: no reimage after its first %d days (history); lower -history-days", f.reimages, f.history)
		}
		return []string{dc.Name}, func(int) (storagesim.Datacenter, error) { return dc, nil }, nil
	}
	if f.inventory != "" {
		return nil, nil, errors.New("-inventory lists the servers of a -reimages log: give both")
	}
	idx, err := parseProfiles(f.profiles)
	if err != nil {
		return nil, nil, err
	}
	profiles := synth.Profiles(f.seed, 1)
	for _, i := range idx {
		names = append(names, profiles[i].Name)
	}
	return names, func(k int) (storagesim.Datacenter, error) {
		p := withServers(profiles[idx[k]], f.servers)
		p.Days, p.ReimageDays = 7, f.history+366
		return storagesim.FromSynth(synth.Generate(p), f.history), nil
	}, nil
}

// withServers sizes a synthetic profile to about servers servers: tenants
// come whole, and a tenant runs PeriodicServers or OtherServers on average,
// less half a server.
func withServers(p synth.Profile, servers int) synth.Profile {
	perTenant := p.PeriodicShare*p.PeriodicServers + (1-p.PeriodicShare)*p.OtherServers - 0.5
	p.Tenants = max(3, int(math.Round(float64(servers)/perTenant)))
	return p
}

// parseProfiles reads "all", "a-b" or "a,b,c" of profiles 0-9.
func parseProfiles(s string) ([]int, error) {
	if s == "all" {
		return []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b > 9 || a > b {
			return nil, fmt.Errorf("-profiles %q: want all, a range such as 0-9, or a list such as 0,3,5 of profiles 0-9", s)
		}
		for i := a; i <= b; i++ {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	return out, nil
}

// splitInts reads a comma-separated list of positive integers.
func splitInts(flagName, s string) ([]int, error) {
	var out []int
	for _, v := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-%s: %q is not a positive integer", flagName, v)
		}
		out = append(out, n)
	}
	return out, nil
}

// replicasAndPolicies reads -replicas and -policies.
func replicasAndPolicies(replicas, policies string) ([]int, []storagesim.Policy, error) {
	r, err := splitInts("replicas", replicas)
	if err != nil {
		return nil, nil, err
	}
	p, err := splitPolicies(policies)
	return r, p, err
}

// splitPolicies reads a comma-separated list of placement policies.
func splitPolicies(s string) ([]storagesim.Policy, error) {
	var out []storagesim.Policy
	for _, v := range strings.Split(s, ",") {
		p, err := storagesim.ParsePolicy(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("-policies: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

func runStorage(f storageFlags) error {
	replicas, policies, err := replicasAndPolicies(f.replicas, f.policies)
	if err != nil {
		return err
	}
	if f.blocks < 1 || f.runs < 1 || f.fill < 0 || f.fill > 1 || f.history < 0 {
		return fmt.Errorf("want -blocks and -runs of at least 1, -fill in 0-1 and -history-days not negative")
	}
	names, load, err := storageInputs(f)
	if err != nil {
		return err
	}
	writers, err := storagesim.ParseWriters(f.writers)
	if err != nil {
		return fmt.Errorf("-writers: %w", err)
	}
	repairLimit, err := storagesim.ParseRepairLimit(f.repairLimit)
	if err != nil {
		return fmt.Errorf("-repair-limit: %w", err)
	}
	began := time.Now()
	var results []storagesim.Result
	total := len(names) * len(replicas) * len(policies) * f.runs
	for k := range names {
		dc, err := load(k)
		if err != nil {
			return err
		}
		servers := 0
		for _, t := range dc.Tenants {
			servers += len(t.Servers)
		}
		for _, r := range replicas {
			capacity := 0
			if f.fill > 0 {
				capacity = int(math.Ceil(float64(f.blocks*r) / float64(servers) / f.fill))
			}
			for _, pol := range policies {
				for run := 0; run < f.runs; run++ {
					label := fmt.Sprintf("%d/%d %s %s R=%d", len(results)+1, total, dc.Name, pol, r)
					res, err := storagesim.Run(dc, storagesim.Config{Seed: f.seed + uint64(run), Policy: pol, Replicas: r, Blocks: f.blocks,
						RepairPerHour: f.repair, Capacity: capacity, RepairOrder: f.repairOrder, Writers: writers, RepairLimit: repairLimit, Steering: f.steering}, func(done, total int) { progressBar(label, done, total) })
					if err != nil {
						return fmt.Errorf("%s: %w", dc.Name, err)
					}
					results = append(results, res)
				}
			}
		}
	}
	wall, rss := time.Since(began).Seconds(), peakRSSMiB()
	bars := lossBars(names, replicas, policies, results)
	ratios := lossRatios(replicas, results)
	ratiosByDC := lossRatiosByDatacenter(names, replicas, results)
	summary := map[string]any{"seed": f.seed, "blocks": f.blocks, "servers": f.servers, "fill": f.fill,
		"repair_per_hour": f.repair, "history_days": f.history, "runs": f.runs, "results": results, "bars": bars,
		"stock_over_grid_lost": ratios, "stock_over_grid_lost_by_datacenter": ratiosByDC, "wall_seconds": wall, "peak_rss_mib": rss}
	csv := func(path string) error { return writeStorageCSV(path, results) }
	plot := func(path string) error {
		title := fmt.Sprintf("Lost blocks in a year (%d blocks, %.0f replicas/h repair)", f.blocks, f.repair)
		return plots.GroupedBars(path, title, "lost blocks (% of blocks, log)", names, bars, true)
	}
	return f.emit(summary, csv, plot, func() {
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "DC\tPOLICY\tR\tSEED\tBLOCKS\tLOST\tLOST %%\tREIMAGES\tREPAIRS\tDOWN TO 1\tLONGEST REPAIR h\tUNWRITTEN\tSERVERS\n")
		for _, r := range results {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.5f\t%d\t%d\t%d\t%.1f\t%d\t%d\n", r.Datacenter, r.Policy, r.Replicas, r.Seed, r.Blocks, r.Lost,
				r.LostPct, r.Reimages, r.Repairs, r.DownToOne, r.LongestRepairHours, r.Unwritten, r.Servers)
		}
		tw.Flush()
		for _, r := range results {
			if r.Retirements > 0 {
				fmt.Printf("%s %s R=%d seed %d: %d servers retired, %d replicas moved off them first\n", r.Datacenter, r.Policy, r.Replicas,
					r.Seed, r.Retirements, r.Drained)
			}
		}
		both := slices.Contains(policies, storagesim.Stock) && slices.Contains(policies, storagesim.Grid)
		for _, r := range replicas {
			key := fmt.Sprintf("R=%d", r)
			if v, ok := ratios[key]; ok {
				fmt.Printf("%s: stock lost %d blocks, grid %d (stock/grid %s)\n", key, v.Stock, v.Grid, v.ratio())
			}
			if !both || len(names) < 2 {
				continue
			}
			var each []string
			for _, name := range names {
				v := ratiosByDC[name][key]
				each = append(each, fmt.Sprintf("%s %d/%d", name, v.Stock, v.Grid))
			}
			fmt.Printf("%s per datacenter, stock/grid lost: %s\n", key, strings.Join(each, ", "))
		}
		fmt.Printf("%d runs: %.1f s wall, peak RSS %.0f MiB\n", len(results), wall, rss)
	})
}

// lossRatio is the blocks lost by stock and grid over all runs of one R.
type lossRatio struct {
	Stock int `json:"stock_lost"`
	Grid  int `json:"grid_lost"`
}

func (l lossRatio) ratio() string {
	if l.Grid == 0 && l.Stock == 0 {
		return "none: neither lost a block"
	}
	if l.Grid == 0 {
		return "infinite: grid lost none"
	}
	return fmt.Sprintf("%.1fx", float64(l.Stock)/float64(l.Grid))
}

func lossRatios(replicas []int, results []storagesim.Result) map[string]lossRatio {
	return lossRatiosOf(replicas, results, func(storagesim.Result) bool { return true })
}

// lossRatiosByDatacenter is lossRatios of each datacenter's own runs: the
// issue's bar (stock/grid per profile) read where it applies.
func lossRatiosByDatacenter(names []string, replicas []int, results []storagesim.Result) map[string]map[string]lossRatio {
	out := map[string]map[string]lossRatio{}
	for _, name := range names {
		out[name] = lossRatiosOf(replicas, results, func(res storagesim.Result) bool { return res.Datacenter == name })
	}
	return out
}

// lossRatiosOf sums, per R, the blocks stock and grid lost in the results
// keep takes.
func lossRatiosOf(replicas []int, results []storagesim.Result, keep func(storagesim.Result) bool) map[string]lossRatio {
	out := map[string]lossRatio{}
	for _, r := range replicas {
		var l lossRatio
		for _, res := range results {
			if res.Replicas != r || !keep(res) {
				continue
			}
			if res.Policy == storagesim.Stock {
				l.Stock += res.Lost
			} else if res.Policy == storagesim.Grid {
				l.Grid += res.Lost
			}
		}
		out[fmt.Sprintf("R=%d", r)] = l
	}
	return out
}

// lossBars is Figure 15's data: per policy and R, the mean, min and max
// lost-block percentage of each datacenter's runs.
func lossBars(names []string, replicas []int, policies []storagesim.Policy, results []storagesim.Result) []plots.BarSeries {
	var out []plots.BarSeries
	for _, r := range replicas {
		for _, pol := range policies {
			s := plots.BarSeries{Name: fmt.Sprintf("%s R=%d", pol, r), Values: make([]float64, len(names)),
				Low: make([]float64, len(names)), High: make([]float64, len(names))}
			for i, name := range names {
				n := 0
				for _, res := range results {
					if res.Datacenter != name || res.Policy != pol || res.Replicas != r {
						continue
					}
					if n == 0 || res.LostPct < s.Low[i] {
						s.Low[i] = res.LostPct
					}
					s.High[i] = math.Max(s.High[i], res.LostPct)
					s.Values[i] += res.LostPct
					n++
				}
				s.Values[i] /= float64(max(1, n))
			}
			out = append(out, s)
		}
	}
	return out
}

func writeStorageCSV(path string, results []storagesim.Result) error {
	rows := [][]string{{"datacenter", "policy", "replicas", "seed", "blocks", "lost_blocks", "lost_percent", "reimages", "repairs",
		"down_to_one_replica", "longest_repair_hours", "degraded_placements", "unwritten_blocks", "servers", "tenants", "retirements", "drained_replicas"}}
	for _, r := range results {
		rows = append(rows, []string{r.Datacenter, string(r.Policy), strconv.Itoa(r.Replicas), strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.Blocks),
			strconv.Itoa(r.Lost), strconv.FormatFloat(r.LostPct, 'g', 6, 64), strconv.Itoa(r.Reimages), strconv.Itoa(r.Repairs),
			strconv.Itoa(r.DownToOne), strconv.FormatFloat(r.LongestRepairHours, 'f', 2, 64), strconv.Itoa(r.Degraded),
			strconv.Itoa(r.Unwritten), strconv.Itoa(r.Servers), strconv.Itoa(r.Tenants), strconv.Itoa(r.Retirements), strconv.Itoa(r.Drained)})
	}
	return writeCSV(path, rows)
}

// peakRSSMiB is this process's peak resident memory (getrusage; Linux
// reports KiB).
func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// readInventory reads an inventory CSV (history/csvfmt.ParseInventory).
func readInventory(path string) ([]csvfmt.InventoryNode, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	inv, err := csvfmt.ParseInventory(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return inv, nil
}

// lifetimesInput reads a disk log (history/csvfmt.ParseLifetimes) into a
// durability input.
func lifetimesInput(path string, historyDays int) (storagesim.Datacenter, error) {
	fh, err := os.Open(path)
	if err != nil {
		return storagesim.Datacenter{}, err
	}
	defer fh.Close()
	disks, err := csvfmt.ParseLifetimes(fh)
	if err != nil {
		return storagesim.Datacenter{}, fmt.Errorf("%s: %w", path, err)
	}
	dc, err := storagesim.FromLifetimes(path, disks, historyDays)
	if err != nil {
		return dc, fmt.Errorf("%s: %w", path, err)
	}
	if len(dc.Reimages) == 0 {
		return dc, fmt.Errorf("%s: no disk failure after its first %d days (history); lower -history-days", path, historyDays)
	}
	return dc, nil
}
