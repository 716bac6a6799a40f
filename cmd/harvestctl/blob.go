package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/storage/front"
)

func blobCommands() map[string]cli.CommandFactory {
	var addr string
	var asJSON bool
	return map[string]cli.CommandFactory{
		"blob status": command.Simple{
			Name: "harvestctl blob status", Synopsis: "Show the blob tier's nodes and repair progress",
			Usage: "harvestctl blob status [-blob-admin-addr URL] [-json]",
			Flags: func(fs *flag.FlagSet) {
				fs.StringVar(&addr, "blob-admin-addr", envOr("HARVEST_BLOB_ADMIN_ADDR", "http://127.0.0.1:9101"), "harvest-blob's admin API")
				fs.BoolVar(&asJSON, "json", false, "print JSON")
			},
			Run: func(ctx context.Context, _ *flag.FlagSet) error {
				st, err := blobStatus(ctx, addr)
				if err != nil {
					return err
				}
				if asJSON {
					return command.PrintJSON(os.Stdout, st)
				}
				printBlobStatus(os.Stdout, st)
				return nil
			},
		}.Factory(),
	}
}

func blobStatus(ctx context.Context, addr string) (front.Status, error) {
	var st front.Status
	err := callAPI(ctx, "harvest-blob", http.MethodGet, addr, "/v1/status", 30*time.Second, &st)
	return st, err
}

func printBlobStatus(w io.Writer, st front.Status) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tTENANT\tENV\tRACK\tCELL\tSTATE\tUSED MiB\tCAPACITY MiB")
	for _, n := range st.Nodes {
		state := "up"
		switch {
		case !n.Up:
			state = "down"
		case n.Busy:
			state = "busy"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d,%d\t%s\t%.1f\t%d\n", n.ID, n.Tenant, n.Environment, n.Rack, n.Row, n.Col, state,
			float64(n.Used)/(1<<20), n.Capacity>>20)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nObjects %d (replication %d), under-replicated %d, lost %d\n", st.Objects, st.Replicas, st.UnderReplicated, st.Lost)
	eta := "-"
	if st.UnderReplicated > 0 {
		eta = (time.Duration(st.ETASeconds) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(w, "Repair: %d replicas re-created, %.0f/h over the last 10 min (limit %.0f/h per server), ETA %s\n",
		st.Repaired, st.RepairRatePerHour, st.LimitPerHour, eta)
	if !st.LastScan.IsZero() {
		fmt.Fprintf(w, "Last scan %s\n", st.LastScan.Format(time.RFC3339))
	}
}
