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

func blobCommands() map[string]cli.CommandFactory {
	var addr string
	var asJSON bool
	return map[string]cli.CommandFactory{
		"blob": command.Group("harvestctl blob", "Show and run the blob tier's upkeep through harvest-blob's admin API",
			"harvestctl blob <status|scrub|gc|safe-mode-confirm> [options]", "status", "scrub", "gc", "safe-mode-confirm"),
		"blob status": command.Simple{
			Name: "harvestctl blob status", Synopsis: "Show the blob tier's nodes and repair progress",
			Usage: "harvestctl blob status [-blob-admin-addr URL] [-json]",
			Flags: func(fs *flag.FlagSet) {
				blobAdminFlag(fs, &addr, "harvest-blob's admin API")
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
		"blob scrub":             blobPost("scrub", "Run a scrubber pass now and print what it found", api.BlobScrub, &addr),
		"blob gc":                blobPost("gc", "Run a garbage collector pass now and print what it did", api.BlobCollectGarbage, &addr),
		"blob safe-mode-confirm": blobPost("safe-mode-confirm", "Confirm that the nodes that put harvest-blob in safe mode are gone", api.BlobConfirmSafeMode, &addr),
	}
}

// blobAdminFlag is -blob-admin-addr: harvest-blob's admin API, from
// HARVEST_BLOB_ADMIN_ADDR else the default admin_listen.
func blobAdminFlag(fs *flag.FlagSet, addr *string, usage string) {
	fs.StringVar(addr, "blob-admin-addr", envOr("HARVEST_BLOB_ADMIN_ADDR", "http://127.0.0.1:9101"), usage)
}

// blobPost is a command that POSTs to one of harvest-blob's admin
// endpoints and prints its JSON answer.
func blobPost(name, synopsis string, action api.BlobAction, addr *string) cli.CommandFactory {
	return command.Simple{
		Name: "harvestctl blob " + name, Synopsis: synopsis, Usage: "harvestctl blob " + name + " [-blob-admin-addr URL]",
		Flags: func(fs *flag.FlagSet) {
			blobAdminFlag(fs, addr, "harvest-blob's admin API (token from HARVEST_BLOB_ADMIN_TOKEN)")
		},
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			out, err := api.Blob(*addr).WithTimeout(30*time.Minute).RunBlobAction(ctx, action)
			if err != nil {
				return err
			}
			return command.PrintJSON(os.Stdout, out)
		},
	}.Factory()
}

func blobStatus(ctx context.Context, addr string) (api.BlobStatus, error) {
	return api.Blob(addr).WithTimeout(30 * time.Second).BlobStatus(ctx)
}

func printBlobStatus(w io.Writer, st api.BlobStatus) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tTENANT\tENV\tRACK\tCELL\tSTATE\tUSED MiB\tCAPACITY MiB\tROOM MiB\tDISK FREE MiB")
	for _, n := range st.Nodes {
		state := "up"
		switch {
		case n.Removed:
			state = "removed"
		case !n.Up:
			state = "down"
		case n.Busy:
			state = "busy"
		}
		disk := "-"
		if n.DiskFree >= 0 {
			disk = fmt.Sprint(n.DiskFree >> 20)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d,%d\t%s\t%.1f\t%d\t%d\t%s\n", n.ID, n.Tenant, n.Environment, n.Rack, n.Row, n.Col, state,
			float64(n.Used)/(1<<20), n.Capacity>>20, n.Room>>20, disk)
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
	fronts := ""
	if st.Fronts > 0 {
		fronts = fmt.Sprintf("; %d front(s) serving", st.Fronts)
	}
	if st.Maintainer {
		fmt.Fprintf(w, "This front maintains the tier (repairs, scrubs, garbage collection)%s\n", fronts)
	} else {
		fmt.Fprintf(w, "This front stands by: another maintains the tier%s\n", fronts)
	}
	if st.SafeMode != "" {
		fmt.Fprintf(w, "SAFE MODE: %s (harvestctl blob safe-mode-confirm)\n", st.SafeMode)
	}
	if g := st.LastGC; !g.Time.IsZero() {
		fmt.Fprintf(w, "Last GC %s: %d replicas, %d deleted (%.1f MiB), %d orphans within the grace (%.1f MiB)%s\n",
			g.Time.Format(time.RFC3339), g.Replicas, g.Deleted, float64(g.DeletedBytes)/(1<<20), g.YoungOrphans,
			float64(g.OrphanBytes)/(1<<20), held(g.Held))
	}
	if sc := st.LastScrub; !sc.Started.IsZero() {
		fmt.Fprintf(w, "Last scrub %s: %d replicas checked (%.1f MiB), %d corrupt, %d missing, %d dropped for repair%s\n",
			sc.Started.Format(time.RFC3339), sc.Replicas, float64(sc.Bytes)/(1<<20), sc.Corrupt, sc.Missing, sc.Dropped, held(sc.Held))
	}
}

func held(why string) string {
	if why == "" {
		return ""
	}
	return "; held: " + why
}
