package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/placer/agent"
)

func classesCommands() map[string]cli.CommandFactory {
	var consul consulFlags
	var placerAddr string
	var asJSON bool
	return map[string]cli.CommandFactory{
		"classes": command.Simple{
			Name: "harvestctl classes", Synopsis: "Show the placer's class table with node counts",
			Usage: "harvestctl classes [-json] [options]",
			Flags: func(fs *flag.FlagSet) {
				consul.register(fs)
				fs.BoolVar(&asJSON, "json", false, "print JSON")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				store, err := consul.store()
				if err != nil {
					return err
				}
				var t agent.StoredTable
				ok, err := store.GetDocument(ctx, agent.ClassesDocument, &t)
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("no class table yet: run the placer, or `harvestctl classes refresh`")
				}
				return printStored(os.Stdout, &t, asJSON)
			},
		}.Factory(),
		"classes refresh": command.Simple{
			Name: "harvestctl classes refresh", Synopsis: "Ask the placer to classify tenants and label nodes now",
			Usage: "harvestctl classes refresh [-placer-addr URL]",
			Flags: func(fs *flag.FlagSet) {
				fs.StringVar(&placerAddr, "placer-addr", envOr("HARVEST_PLACER_ADDR", "http://127.0.0.1:4650"), "the placer's HTTP API")
				fs.BoolVar(&asJSON, "json", false, "print JSON")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				t, err := refreshClasses(ctx, placerAddr)
				if err != nil {
					return err
				}
				return printStored(os.Stdout, t, asJSON)
			},
		}.Factory(),
	}
}

func refreshClasses(ctx context.Context, addr string) (*agent.StoredTable, error) {
	var t agent.StoredTable
	if err := callAPI(ctx, "placer", http.MethodPost, addr, "/v1/classes/refresh", 5*time.Minute, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

func printStored(w io.Writer, t *agent.StoredTable, asJSON bool) error {
	if asJSON {
		return command.PrintJSON(w, t)
	}
	fmt.Fprintf(w, "Class table of %s\n\n", t.Generated.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tPATTERN\tTENANTS\tNOMAD NODES\tAVERAGE %\tPEAK %\tCURRENT %")
	for _, c := range t.Classes {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\n", c.Name, c.Pattern, len(c.Tenants), t.NodeCounts[c.Name], c.Average, c.Peak, c.Current)
	}
	if n := t.NodeCounts["unclassified"]; n > 0 || len(t.Unclassified) > 0 {
		fmt.Fprintf(tw, "unclassified\t-\t%d\t%d\t\t\t\n", len(t.Unclassified), n)
	}
	tw.Flush()
	for _, u := range t.Unclassified {
		fmt.Fprintf(w, "  %s: %s\n", u.Tenant, u.Reason)
	}
	return nil
}
