package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/placer/jobtype"
)

func classesCommands() map[string]cli.CommandFactory {
	var consul consulFlags
	var placerAddr string
	var asJSON, showSurvival bool
	return map[string]cli.CommandFactory{
		"classes": command.Simple{
			Name: "harvestctl classes", Synopsis: "Show the placer's class table with node counts",
			Usage: "harvestctl classes [-survival] [-json] [options]",
			Flags: func(fs *flag.FlagSet) {
				consul.register(fs)
				fs.BoolVar(&asJSON, "json", false, "print JSON (survival included)")
				fs.BoolVar(&showSurvival, "survival", false, "show each class's task survival by length and job type")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				store, err := consul.store()
				if err != nil {
					return err
				}
				var t api.ClassTable
				ok, err := store.GetDocument(ctx, contract.ClassesDocument, &t)
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("no class table yet: run the placer, or `harvestctl classes refresh`")
				}
				return printStored(os.Stdout, &t, asJSON, showSurvival)
			},
		}.Factory(),
		"classes refresh": command.Simple{
			Name: "harvestctl classes refresh", Synopsis: "Ask the placer to classify tenants and label nodes now",
			Usage: "harvestctl classes refresh [-placer-addr URL] [-survival] [-json]",
			Flags: func(fs *flag.FlagSet) {
				fs.StringVar(&placerAddr, "placer-addr", envOr("HARVEST_PLACER_ADDR", "http://127.0.0.1:4650"), "the placer's HTTP API")
				fs.BoolVar(&asJSON, "json", false, "print JSON (survival included)")
				fs.BoolVar(&showSurvival, "survival", false, "show each class's task survival by length and job type")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				t, err := refreshClasses(ctx, placerAddr)
				if err != nil {
					return err
				}
				return printStored(os.Stdout, t, asJSON, showSurvival)
			},
		}.Factory(),
	}
}

func refreshClasses(ctx context.Context, addr string) (*api.ClassTable, error) {
	t, err := api.Placer(addr).WithTimeout(5 * time.Minute).RefreshClasses(ctx)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func printStored(w io.Writer, t *api.ClassTable, asJSON, withSurvival bool) error {
	switch {
	case asJSON:
		return command.PrintJSON(w, t)
	case withSurvival:
		printSurvival(w, t)
		return nil
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

// printSurvival shows, per class, the share of harvested tasks of each
// length that run to their end, then one figure per job type.
func printSurvival(w io.Writer, t *api.ClassTable) {
	fmt.Fprintf(w, "Task survival by class, table of %s\n", t.Generated.Format(time.RFC3339))
	fmt.Fprintln(w, "(share of tasks of each length that end before an eviction, replayed over the class's history on a")
	fmt.Fprintln(w, "full server of its typical size, youngest killed first: a lower bound when servers are not full)")
	fmt.Fprintln(w)
	var lengths []time.Duration // the grid of the first class that has one
	var types []api.JobTypeSurvival
	for _, c := range t.Classes {
		if len(c.Survival) > 0 && lengths == nil {
			for _, p := range c.Survival {
				lengths = append(lengths, p.Length)
			}
			for _, typ := range jobTypes {
				types = append(types, c.SurvivalByJobType[typ])
			}
		}
	}
	if lengths == nil {
		fmt.Fprintln(w, "No class has survival figures yet.")
	} else {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		head := []string{"CLASS", "PATTERN"}
		for _, l := range lengths {
			head = append(head, shortDuration(l))
		}
		for i, typ := range jobTypes {
			head = append(head, strings.ToUpper(typ)+" "+shortDuration(types[i].Length))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, c := range t.Classes {
			if len(c.Survival) == 0 {
				continue
			}
			row := []string{c.Name, string(c.Pattern)}
			for _, p := range c.Survival {
				row = append(row, percent(p.Probability))
			}
			for _, typ := range jobTypes {
				row = append(row, percent(c.SurvivalByJobType[typ].Probability))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
	}
	for _, c := range t.Classes {
		if len(c.Survival) == 0 {
			fmt.Fprintf(w, "  %s: no figures: %s\n", c.Name, or(c.SurvivalUnavailable, "none published (a placer older than survival?)"))
		}
	}
}

var jobTypes = []string{jobtype.Short, jobtype.Medium, jobtype.Long}

// percent prints a probability as a percentage, "-" when unknown (no
// replayed task of that length was decided).
func percent(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**p)
}

// shortDuration drops a duration's zero minutes and seconds: 2m, 1h, 2m53s.
func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "m0s")
	if s != d.String() {
		s += "m"
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
