package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/placer/classify"
)

func classifyCommand() cli.CommandFactory {
	var format, labelsPath, start string
	var asJSON, strict bool
	return command.Simple{
		Name: "harvestctl classify", Synopsis: "Classify tenants from a history CSV offline (no Consul needed)",
		Usage: "harvestctl classify [-format azure-v1|long] [-json] [-labels labels.csv] FILE",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&format, "format", "long", "input layout: long or azure-v1 (gzip accepted)")
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of tables")
			fs.StringVar(&labelsPath, "labels", "", "known patterns (tenant,pattern,...) to score against, e.g. from history synth")
			fs.StringVar(&start, "start", azureStart, "azure-v1 only: the time of the file's first row")
			fs.BoolVar(&strict, "strict", false, "long: stop at the first bad row instead of skipping and reporting it")
		},
		Run: func(ctx context.Context, fs *flag.FlagSet) error {
			path, err := oneArg(fs, "FILE")
			if err != nil {
				return err
			}
			inputs, known, err := readInputs(path, format, start, strict)
			if err != nil {
				return err
			}
			if labelsPath != "" {
				if known, err = readLabels(labelsPath); err != nil {
					return err
				}
			}
			table := classify.Classify(inputs, classify.Default())
			if asJSON {
				return command.PrintJSON(os.Stdout, table)
			}
			printTable(os.Stdout, table, known)
			return nil
		},
	}.Factory()
}

// readInputs reads a history file; for Azure files with period labels it
// also returns them ("<hours>h") as known labels.
func readInputs(path, format, start string, strict bool) ([]classify.Input, map[string]string, error) {
	in, err := openInput(path)
	if err != nil {
		return nil, nil, err
	}
	defer in.Close()
	var inputs []classify.Input
	known := map[string]string{}
	switch format {
	case "long":
		series, rep, err := csvfmt.ParseLong(in, csvfmt.LongOptions{Strict: strict})
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", path, rep)
		for id, s := range series {
			inputs = append(inputs, classify.Input{Tenant: id.String(), Series: s})
		}
	case "azure-v1":
		t0, err := csvfmt.ParseTime(start)
		if err != nil {
			return nil, nil, err
		}
		vms, err := csvfmt.ParseAzure(in, t0)
		if err != nil {
			return nil, nil, err
		}
		for _, vm := range vms {
			inputs = append(inputs, classify.Input{Tenant: vm.Tenant.String(), Nodes: []string{vm.Tenant.Function}, Series: vm.Series})
			if vm.PeriodHours > 0 {
				known[vm.Tenant.String()] = fmt.Sprintf("%dh", vm.PeriodHours)
			}
		}
	default:
		return nil, nil, fmt.Errorf("-format %q: want long or azure-v1", format)
	}
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].Tenant < inputs[j].Tenant })
	return inputs, known, nil
}

// readLabels reads tenant,pattern[,...] rows with a header.
func readLabels(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	out := map[string]string{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("%s line %d: want tenant,pattern", path, line)
		}
		if line > 1 {
			out[rec[0]] = rec[1]
		}
	}
}

func printTable(w io.Writer, t classify.Table, known map[string]string) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tPATTERN\tTENANTS\tNODES\tAVERAGE %\tPEAK %\tCURRENT %")
	for _, c := range t.Classes {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\n", c.Name, c.Pattern, len(c.Tenants), len(c.Nodes), c.Average, c.Peak, c.Current)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	header := "TENANT\tPATTERN\tCLASS\tMEAN %\tSD\tSTRENGTH\tPERIOD"
	if len(known) > 0 {
		header += "\tKNOWN"
	}
	fmt.Fprintln(tw, header)
	for _, r := range t.Tenants {
		if r.Class == "" {
			fmt.Fprintf(tw, "%s\t-\t-\t\t\t\t\t%s\n", r.Tenant, r.Reason)
			continue
		}
		f := r.Features
		period := "-"
		if f.Period > 0 {
			period = f.Period.Round(1e9).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.1f\t%.2f\t%s", r.Tenant, r.Pattern, r.Class, f.Mean, f.SD, f.Strength, period)
		if len(known) > 0 {
			fmt.Fprintf(tw, "\t%s", known[r.Tenant])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	printSummary2(w, t, known)
}

// printSummary2 prints the pattern mix and, with known labels, how the
// classification compares.
func printSummary2(w io.Writer, t classify.Table, known map[string]string) {
	mix := map[classify.Pattern]int{}
	confusion := map[string]map[classify.Pattern]int{}
	for _, r := range t.Tenants {
		mix[r.Pattern]++
		if k, ok := known[r.Tenant]; ok {
			if confusion[k] == nil {
				confusion[k] = map[classify.Pattern]int{}
			}
			confusion[k][r.Pattern]++
		}
	}
	fmt.Fprintf(w, "\nPattern mix of %d tenants: periodic %d, constant %d, unpredictable %d, unclassified %d\n",
		len(t.Tenants), mix[classify.Periodic], mix[classify.Constant], mix[classify.Unpredictable], mix[""])
	if len(confusion) == 0 {
		return
	}
	fmt.Fprintln(w, "\nKnown label -> classified pattern:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KNOWN\tPERIODIC\tCONSTANT\tUNPREDICTABLE\tUNCLASSIFIED\tMATCH")
	right, all := 0, 0
	keys := make([]string, 0, len(confusion))
	for k := range confusion {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row := confusion[k]
		n := row[classify.Periodic] + row[classify.Constant] + row[classify.Unpredictable] + row[""]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t", k, row[classify.Periodic], row[classify.Constant], row[classify.Unpredictable], row[""])
		if hit := row[classify.Pattern(k)]; hit > 0 || isPattern(k) {
			fmt.Fprintf(tw, "%d/%d", hit, n)
			right += hit
			all += n
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if all > 0 {
		fmt.Fprintf(w, "pattern accuracy: %.1f%% (%d of %d)\n", 100*float64(right)/float64(all), right, all)
	}
}

func isPattern(s string) bool {
	for _, p := range classify.Patterns {
		if string(p) == s {
			return true
		}
	}
	return false
}
