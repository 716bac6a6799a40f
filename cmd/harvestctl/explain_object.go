package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/internal/command"
)

// explainObjectCommand is `harvestctl explain object BUCKET KEY`: where the
// blob tier put an object's replicas and what a read finds there now.
func explainObjectCommand() cli.CommandFactory {
	var addr string
	var asJSON bool
	return command.Simple{
		Name: "harvestctl explain object", Synopsis: "Say where the blob tier put an object's replicas and whether a read finds one now",
		Usage: "harvestctl explain object [-blob-admin-addr URL] [-json] BUCKET KEY",
		Flags: func(fs *flag.FlagSet) {
			blobAdminFlag(fs, &addr, "harvest-blob's admin API (token from HARVEST_BLOB_ADMIN_TOKEN: object names need one)")
			fs.BoolVar(&asJSON, "json", false, "print JSON")
		},
		Run: func(ctx context.Context, fs *flag.FlagSet) error {
			if fs.NArg() != 2 {
				return fmt.Errorf("want BUCKET and KEY, got %d arguments", fs.NArg())
			}
			o, err := api.Blob(addr).WithTimeout(30*time.Second).BlobObject(ctx, fs.Arg(0), fs.Arg(1))
			if err != nil {
				return err
			}
			if asJSON {
				return command.PrintJSON(os.Stdout, o)
			}
			printObjectExplanation(os.Stdout, o)
			return nil
		},
	}.Factory()
}

func printObjectExplanation(w io.Writer, o api.BlobObject) {
	fmt.Fprintf(w, "Object %s/%s: %d bytes, ETag %s, version %s\n", o.Bucket, o.Key, o.Size, o.ETag, o.Version)
	if o.Degraded {
		fmt.Fprintln(w, "Placement degraded: it could not keep every diversity rule")
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tTENANT\tENV\tRACK\tCELL\tSTATE\tPEAK CPU %\tREIMAGES/SERVER/MONTH\tBUSY H/DAY")
	for _, r := range o.Replicas {
		if !r.Configured {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\tnot configured\t-\t-\t-\n", r.Node)
			continue
		}
		state := "readable"
		switch {
		case !r.Up:
			state = "down"
		case r.Busy:
			state = "busy"
		}
		cell, busyHours := "-", "no history"
		if r.Row >= 0 {
			cell = fmt.Sprintf("%d,%d", r.Row, r.Col)
		}
		if len(r.BusyHours) > 0 {
			sum := 0.0
			for _, h := range r.BusyHours {
				sum += h
			}
			busyHours = fmt.Sprintf("%.1f", sum)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.2f\t%s\n", r.Node, r.Tenant, r.Environment, r.Rack, cell, state,
			r.PeakCPU, r.ReimageRate, busyHours)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nA read finds %d of %d replicas readable now.\n", o.ReadableNow, len(o.Replicas))
	fmt.Fprintf(w, "From the tenants' history every replica is busy at once %.2f hours a day, when a read answers SlowDown\n"+
		"(an hour of the day a tenant's history does not cover yet counts as busy).\n", o.AllBusyHoursPerDay)
}
