package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/storagesim"
)

func storageCommand() cli.CommandFactory {
	var seed uint64
	var tenants, blocks int
	var repair float64
	var asJSON bool
	var plotPath string
	return command.Simple{
		Name: "harvest-sim storage", Synopsis: "Simulate a year of reimages: blocks lost under stock HDFS placement and Algorithm 2",
		Usage: "harvest-sim storage [-seed N] [-tenants N] [-blocks N] [-repair-rate N] [-json]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&seed, "seed", 1, "random seed: the same seed gives the same datacenter and run")
			fs.IntVar(&tenants, "tenants", 1000, "primary tenants in the synthetic datacenter")
			fs.IntVar(&blocks, "blocks", 200000, "blocks written over the year")
			fs.Float64Var(&repair, "repair-rate", 30, "replicas re-created per hour per reimaged server")
			fs.BoolVar(&asJSON, "json", false, "print a JSON summary")
			fs.StringVar(&plotPath, "plot", "", "also draw lost blocks per policy and replication to this PNG (or SVG) file")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error {
			p := synth.DefaultProfile(seed, tenants)
			p.Days, p.ReimageDays = 1, 365
			dc := synth.Generate(p)
			var results []storagesim.Result
			runs := []struct {
				policy   storagesim.Policy
				replicas int
			}{{storagesim.Stock, 3}, {storagesim.Grid, 3}, {storagesim.Stock, 4}, {storagesim.Grid, 4}}
			for i, r := range runs {
				res, err := storagesim.Run(dc, storagesim.Config{Seed: seed, Policy: r.policy, Replicas: r.replicas, Blocks: blocks, RepairPerHour: repair},
					func(done, total int) {
						progressBar(fmt.Sprintf("run %d/%d %s R=%d", i+1, len(runs), r.policy, r.replicas), done, total)
					})
				if err != nil {
					return err
				}
				results = append(results, res)
			}
			if plotPath != "" {
				bars := map[string]float64{}
				for _, r := range results {
					bars[fmt.Sprintf("%s R=%d", r.Policy, r.Replicas)] = float64(r.Lost)
				}
				if err := plots.Bars(plotPath, fmt.Sprintf("Blocks lost in a year (%d blocks, %d servers)", blocks, results[0].Servers), "lost blocks", bars); err != nil {
					return err
				}
			}
			if asJSON {
				return command.PrintJSON(os.Stdout, map[string]any{"seed": seed, "tenants": tenants, "results": results})
			}
			tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "POLICY\tR\tBLOCKS\tLOST\tLOST %%\tREIMAGES\tREPAIRS\tSERVERS\n")
			for _, r := range results {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.4f\t%d\t%d\t%d\n", r.Policy, r.Replicas, r.Blocks, r.Lost, 100*r.LostShare(), r.Reimages, r.Repairs, r.Servers)
			}
			return tw.Flush()
		},
	}.Factory()
}

// progressBar redraws a bar on a terminal's stderr; elsewhere it is silent.
func progressBar(label string, done, total int) {
	if fi, err := os.Stderr.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 || total == 0 {
		return
	}
	const width = 30
	filled := done * width / total
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < filled {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(os.Stderr, "\r%-22s [%s] %3d%%", label, bar, done*100/total)
	if done == total {
		fmt.Fprintln(os.Stderr)
	}
}

func accessCommand() cli.CommandFactory {
	var seed uint64
	var tenants, blocks, accesses int
	var threshold float64
	var scaling, plotPath string
	var asJSON bool
	return command.Simple{
		Name: "harvest-sim access", Synopsis: "Simulate reads as utilisation rises: the share that finds every replica busy, per policy",
		Usage: "harvest-sim access [-seed N] [-tenants N] [-blocks N] [-accesses N] [-busy-threshold P] [-scaling linear|root] [-json]",
		Flags: func(fs *flag.FlagSet) {
			fs.Uint64Var(&seed, "seed", 1, "random seed")
			fs.IntVar(&tenants, "tenants", 500, "primary tenants in the synthetic datacenter")
			fs.IntVar(&blocks, "blocks", 20000, "blocks placed")
			fs.IntVar(&accesses, "accesses", 100000, "reads per utilisation level")
			fs.Float64Var(&threshold, "busy-threshold", 67, "a server is busy at or above this utilisation (the reserve's edge for a 33% reserve)")
			fs.StringVar(&scaling, "scaling", "linear", "how utilisation is scaled up: linear or root")
			fs.StringVar(&plotPath, "plot", "", "also draw the curves to this PNG (or SVG) file")
			fs.BoolVar(&asJSON, "json", false, "print JSON")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error {
			if scaling != string(storagesim.Linear) && scaling != string(storagesim.Root) {
				return fmt.Errorf("-scaling %q: want linear or root", scaling)
			}
			p := synth.DefaultProfile(seed, tenants)
			p.Days = 7
			points, err := storagesim.Availability(synth.Generate(p), storagesim.AccessConfig{
				Seed: seed, Blocks: blocks, Accesses: accesses, Utilisations: []float64{20, 30, 40, 50, 60, 70},
				BusyThreshold: threshold, Scaling: storagesim.Scaling(scaling),
			}, []storagesim.Policy{storagesim.Stock, storagesim.Grid}, []int{3, 4})
			if err != nil {
				return err
			}
			if plotPath != "" {
				bySeries := map[string]*plots.Series{}
				var order []string
				for _, pt := range points {
					name := fmt.Sprintf("%s R=%d", pt.Policy, pt.Replicas)
					if bySeries[name] == nil {
						bySeries[name] = &plots.Series{Name: name}
						order = append(order, name)
					}
					bySeries[name].X = append(bySeries[name].X, pt.Utilisation)
					bySeries[name].Y = append(bySeries[name].Y, 100*pt.FailedShare())
				}
				var series []plots.Series
				for _, n := range order {
					series = append(series, *bySeries[n])
				}
				if err := plots.Lines(plotPath, fmt.Sprintf("Reads finding every replica busy (%s scaling, busy at %.0f%%)", scaling, threshold),
					"mean primary-tenant utilisation (%)", "failed reads (%)", series); err != nil {
					return err
				}
			}
			if asJSON {
				return command.PrintJSON(os.Stdout, map[string]any{"seed": seed, "tenants": tenants, "scaling": scaling, "points": points})
			}
			tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "UTILISATION %%\tPOLICY\tR\tFAILED READS %%\n")
			for _, pt := range points {
				fmt.Fprintf(tw, "%.0f\t%s\t%d\t%.4f\n", pt.Utilisation, pt.Policy, pt.Replicas, 100*pt.FailedShare())
			}
			return tw.Flush()
		},
	}.Factory()
}
