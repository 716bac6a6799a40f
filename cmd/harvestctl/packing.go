package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/internal/command"
)

// packingCommand lists the placer's packing tiers and the nodes that can
// be scaled in or released (container-packing.txt).
func packingCommand() cli.CommandFactory {
	var placerAddr string
	var asJSON bool
	return command.Simple{
		Name: "harvestctl packing", Synopsis: "List nodes by packing tier and those that can be scaled in or released",
		Usage: "harvestctl packing [-placer-addr URL] [-json]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&placerAddr, "placer-addr", envOr("HARVEST_PLACER_ADDR", "http://127.0.0.1:4650"), "the placer's HTTP API")
			fs.BoolVar(&asJSON, "json", false, "print JSON")
		},
		Run: func(ctx context.Context, fs *flag.FlagSet) error {
			r, err := api.Placer(placerAddr).WithTimeout(30 * time.Second).Packing(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return command.PrintJSON(os.Stdout, r)
			}
			printPacking(os.Stdout, r, time.Now())
			return nil
		},
	}.Factory()
}

func printPacking(w io.Writer, r api.PackingReport, now time.Time) {
	state := "on"
	if !r.Active {
		state = "off"
	}
	fmt.Fprintf(w, "Packing %s (%s), high at %.0f%% of harvestable memory; as of %s\n\n", state, r.Reason, 100*r.HighThreshold,
		r.Updated.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ORDER\tNODE\tTIER\tHARVESTED MB\tOF MB\tEMPTY FOR\tRELEASABLE")
	var releasable []string
	for i, n := range r.Nodes {
		empty := "-"
		if n.EmptySince != nil {
			empty = now.Sub(*n.EmptySince).Round(time.Second).String()
		}
		yes := "no"
		if n.Releasable {
			yes, releasable = "yes", append(releasable, n.Name)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%.0f\t%s\t%s\n", i+1, n.Name, n.Tier, n.UsedMB, n.HarvestMB, empty, yes)
	}
	tw.Flush()
	if len(releasable) == 0 {
		fmt.Fprintf(w, "\nNo node has been empty of harvested work for %s.\n", r.ReleaseAfter)
		return
	}
	fmt.Fprintf(w, "\n%d node(s) empty of harvested work for at least %s can be scaled in or released: %s\n",
		len(releasable), r.ReleaseAfter, strings.Join(releasable, ", "))
}
