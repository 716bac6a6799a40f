package main

import (
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/command"
)

// azureStart is when the Azure V1 trace begins (its rows carry no time).
const azureStart = "2016-11-16T00:00:00Z"

func historyCommands() map[string]cli.CommandFactory {
	var consul consulFlags
	var format, start, reimages, outDir, profile string
	var days, tenants int
	var seed uint64
	var importToo, strict bool
	var named namedTenants
	var pluginConfig, importer, from, to string
	var tenantFilter repeatedFlag
	return map[string]cli.CommandFactory{
		"history": command.Group("harvestctl history", "Import, export and synthesise tenant history",
			"harvestctl history <import|export|synth|format> [options]", "import", "export", "synth", "format"),
		"history format": historyFormatCommand(),
		"history import": command.Simple{
			Name: "harvestctl history import", Synopsis: "Import tenant history from CSV files into Consul KV",
			Usage: "harvestctl history import -format azure-v1|long|reimages [options] FILE...\n" +
				"       harvestctl history import -plugin-config plugins.hcl -importer NAME -from T -to T [-tenant env/fn ...]",
			Flags: func(fs *flag.FlagSet) {
				consul.register(fs)
				fs.StringVar(&format, "format", "long", "input layout: long (tenant,timestamp,cpu_percent), reimages (tenant,node,timestamp) or azure-v1")
				fs.StringVar(&start, "start", azureStart, "azure-v1 only: the time of the file's first row")
				fs.StringVar(&pluginConfig, "plugin-config", "", "plugin configuration (plugin_dir, history_importer blocks) for -importer")
				fs.StringVar(&importer, "importer", "", "import through this history_importer block (built-ins: csv-long, csv-reimages; or an external plugin)")
				fs.StringVar(&from, "from", "", "-importer: start of the range (RFC 3339)")
				fs.StringVar(&to, "to", "", "-importer: end of the range (RFC 3339, exclusive)")
				fs.Var(&tenantFilter, "tenant", "-importer: only this tenant (environment/function; repeatable)")
				fs.BoolVar(&strict, "strict", false, "long: stop at the first bad row instead of skipping and reporting it")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				store, err := consul.store()
				if err != nil {
					return err
				}
				if importer != "" {
					if pluginConfig == "" {
						return errors.New("-importer needs -plugin-config")
					}
					return pluginImport(ctx, store, pluginConfig, importer, from, to, tenantFilter)
				}
				if fs.NArg() == 0 {
					return errors.New("name at least one FILE (or - for standard input)")
				}
				if _, err := store.InitFormat(ctx); err != nil {
					return err
				}
				for _, path := range fs.Args() {
					if err := importFile(ctx, store, format, start, path, strict); err != nil {
						return fmt.Errorf("%s: %w", path, err)
					}
				}
				return nil
			},
		}.Factory(),
		"history export": command.Simple{
			Name: "harvestctl history export", Synopsis: "Write tenant history from Consul KV in the long CSV format",
			Usage: "harvestctl history export [options] > series.csv",
			Flags: func(fs *flag.FlagSet) {
				consul.register(fs)
				fs.IntVar(&days, "days", 35, "how many days back to export")
				fs.StringVar(&reimages, "reimages", "", "also write reimage events to this file")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				store, err := consul.store()
				if err != nil {
					return err
				}
				return exportHistory(ctx, store, days, reimages)
			},
		}.Factory(),
		"history synth": command.Simple{
			Name: "harvestctl history synth", Synopsis: "Generate a synthetic datacenter's tenant history (seeded)",
			Usage: "harvestctl history synth [-seed N] [-tenants N] [-days N] [-profile dc-0..dc-9] (-out DIR | -import)",
			Flags: func(fs *flag.FlagSet) {
				consul.register(fs)
				fs.Uint64Var(&seed, "seed", 1, "random seed: the same seed gives the same datacenter")
				fs.IntVar(&tenants, "tenants", 200, "number of primary tenants")
				fs.IntVar(&days, "days", 35, "days of 2-minute utilisation (and of reimages)")
				fs.StringVar(&profile, "profile", "default", "datacenter profile: default or dc-0 .. dc-9")
				fs.StringVar(&outDir, "out", "", "write series.csv.gz, reimages.csv and labels.csv here")
				fs.BoolVar(&importToo, "import", false, "write the history into Consul KV")
				fs.Var(&named, "tenant", "also make this tenant with this pattern, as env/function=periodic|constant|unpredictable (repeatable)")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				if outDir == "" && !importToo {
					return errors.New("say where the datacenter goes: -out DIR, -import, or both")
				}
				p, err := synthProfile(profile, seed, tenants, days)
				if err != nil {
					return err
				}
				dc := synth.Generate(p)
				for i, n := range named {
					dc.Tenants = append(dc.Tenants, synth.Tenant{ID: n.id, Pattern: n.pattern,
						Series: synth.PatternSeries(seed+uint64(i)+1000, n.pattern, p.Start, p.Days)})
				}
				if outDir != "" {
					if err := writeSynth(dc, outDir); err != nil {
						return err
					}
				}
				if importToo {
					store, err := consul.store()
					if err != nil {
						return err
					}
					return importSynth(ctx, store, dc)
				}
				return nil
			},
		}.Factory(),
	}
}

func synthProfile(name string, seed uint64, tenants, days int) (synth.Profile, error) {
	p := synth.DefaultProfile(seed, tenants)
	if name != "default" {
		found := false
		for _, q := range synth.Profiles(seed, tenants) {
			if q.Name == name {
				p, found = q, true
			}
		}
		if !found {
			return p, fmt.Errorf("profile %q: want default or dc-0 .. dc-9", name)
		}
	}
	if tenants < 0 || days < 1 {
		return p, errors.New("-tenants must not be negative and -days must be at least 1")
	}
	p.Days = days
	p.Start = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -days)
	return p, nil
}

func importFile(ctx context.Context, store *history.Store, format, start, path string, strict bool) error {
	in, err := openInput(path)
	if err != nil {
		return err
	}
	defer in.Close()
	switch format {
	case "long":
		series, rep, err := csvfmt.ParseLong(in, csvfmt.LongOptions{Strict: strict})
		if err != nil {
			return err
		}
		for id := range series {
			if err := store.EnsureTenant(ctx, id); err != nil {
				return err
			}
		}
		if err := store.PutDays(ctx, series); err != nil { // whole days at once
			return err
		}
		fmt.Printf("imported %d tenants from %s: %s\n", len(series), path, rep)
	case "reimages":
		events, err := csvfmt.ParseReimages(in)
		if err != nil {
			return err
		}
		n := 0
		for id, ev := range events {
			if err := store.AddReimages(ctx, id, ev); err != nil {
				return err
			}
			n += len(ev)
		}
		fmt.Printf("imported %d reimage events of %d tenants from %s\n", n, len(events), path)
	case "azure-v1":
		t0, err := csvfmt.ParseTime(start)
		if err != nil {
			return fmt.Errorf("-start: %w", err)
		}
		vms, err := csvfmt.ParseAzure(in, t0)
		if err != nil {
			return err
		}
		series := map[history.TenantID]history.Series{}
		for i, vm := range vms {
			if err := store.EnsureTenant(ctx, vm.Tenant, vm.Tenant.Function); err != nil {
				return err
			}
			series[vm.Tenant] = vm.Series
			progress(i+1, len(vms), "tenants")
		}
		if err := store.PutDays(ctx, series); err != nil { // whole days at once
			return err
		}
		fmt.Printf("imported %d Azure VMs as tenants from %s\n", len(vms), path)
	default:
		return fmt.Errorf("-format %q: want long, reimages or azure-v1", format)
	}
	return nil
}

// progress redraws one line on a terminal (and says nothing elsewhere).
func progress(done, total int, what string) {
	if fi, err := os.Stderr.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return
	}
	fmt.Fprintf(os.Stderr, "\r%d/%d %s", done, total, what)
	if done == total {
		fmt.Fprintln(os.Stderr)
	}
}

func exportHistory(ctx context.Context, store *history.Store, days int, reimagesPath string) error {
	tenants, err := store.Tenants(ctx)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	from := now.AddDate(0, 0, -days)
	// every tenant at once: one list per day, as the placer reads
	cache, err := store.NewCache()
	if err != nil {
		return err
	}
	if _, err := cache.Refresh(ctx, history.DateOf(from), history.DateOf(now)); err != nil {
		return err
	}
	for _, err := range cache.Corrupt() {
		return err
	}
	for _, err := range cache.BrokenBundles() {
		return err
	}
	series := map[history.TenantID]history.Series{}
	events := map[history.TenantID][]history.Reimage{}
	for _, t := range tenants {
		series[t.ID()] = cache.Series(t.ID().String(), from, now, nil)
		if events[t.ID()], err = store.Reimages(ctx, t.ID()); err != nil {
			return err
		}
	}
	if err := csvfmt.WriteLong(os.Stdout, series); err != nil {
		return err
	}
	if reimagesPath == "" {
		return nil
	}
	f, err := os.Create(reimagesPath)
	if err != nil {
		return err
	}
	if err := csvfmt.WriteReimages(f, events); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeSynth(dc synth.Datacenter, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	series := map[history.TenantID]history.Series{}
	events := map[history.TenantID][]history.Reimage{}
	for _, t := range dc.Tenants {
		series[t.ID], events[t.ID] = t.Series, t.Reimages
	}
	f, err := os.Create(filepath.Join(dir, "series.csv.gz"))
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(f)
	if err := csvfmt.WriteLong(gz, series); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if f, err = os.Create(filepath.Join(dir, "reimages.csv")); err != nil {
		return err
	}
	if err := csvfmt.WriteReimages(f, events); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if f, err = os.Create(filepath.Join(dir, "labels.csv")); err != nil {
		return err
	}
	fmt.Fprintln(f, "tenant,pattern,nodes,reimages_per_server_month")
	for _, t := range dc.Tenants {
		fmt.Fprintf(f, "%s,%s,%d,%.3f\n", t.ID, t.Pattern, len(t.Nodes), t.ReimageRate)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("wrote %d tenants of profile %s (seed %d) to %s\n", len(dc.Tenants), dc.Profile.Name, dc.Profile.Seed, dir)
	return nil
}

func importSynth(ctx context.Context, store *history.Store, dc synth.Datacenter) error {
	if _, err := store.InitFormat(ctx); err != nil {
		return err
	}
	series := map[history.TenantID]history.Series{}
	for i, t := range dc.Tenants {
		if err := store.EnsureTenant(ctx, t.ID, t.Nodes...); err != nil {
			return err
		}
		if err := store.AddReimages(ctx, t.ID, t.Reimages); err != nil {
			return err
		}
		series[t.ID] = t.Series
		progress(i+1, len(dc.Tenants), "tenants")
	}
	// whole days at once: into the days' bundles under format 3
	if err := store.PutDays(ctx, series); err != nil {
		return err
	}
	fmt.Printf("imported %d synthetic tenants into Consul KV\n", len(dc.Tenants))
	return nil
}

// namedTenants is the repeatable -tenant env/function=pattern flag.
type namedTenants []struct {
	id      history.TenantID
	pattern synth.Pattern
}

func (n *namedTenants) String() string { return fmt.Sprint(len(*n), " tenants") }

func (n *namedTenants) Set(v string) error {
	name, pat, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want env/function=pattern", v)
	}
	id, err := history.ParseTenantID(name)
	if err != nil {
		return err
	}
	switch p := synth.Pattern(pat); p {
	case synth.Periodic, synth.Constant, synth.Unpredictable:
		*n = append(*n, struct {
			id      history.TenantID
			pattern synth.Pattern
		}{id, p})
		return nil
	}
	return fmt.Errorf("pattern %q: want periodic, constant or unpredictable", pat)
}

// historyFormatCommand: harvestctl history format [-set 2|3|4].
func historyFormatCommand() cli.CommandFactory {
	var consul consulFlags
	var set int
	return command.Simple{
		Name: "harvestctl history format", Synopsis: "Show or set the tenant history format writers use",
		Usage: "harvestctl history format [-set 4]",
		Flags: func(fs *flag.FlagSet) {
			consul.register(fs)
			fs.IntVar(&set, "set", 0, "set the format (4 once every driver, placer and blob front reads it; lower to roll back)")
		},
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			store, err := consul.store()
			if err != nil {
				return err
			}
			if set != 0 {
				if err := store.SetFormat(ctx, set); err != nil {
					return err
				}
			}
			f, err := store.Format(ctx)
			if err != nil {
				return err
			}
			fmt.Printf("day format %d (writers follow within 5 minutes)\n", f)
			return nil
		},
	}.Factory()
}
