package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// repeatedFlag collects a flag given several times (-tenant, -cgroup).
type repeatedFlag []string

func (c *repeatedFlag) String() string     { return strings.Join(*c, ",") }
func (c *repeatedFlag) Set(v string) error { *c = append(*c, v); return nil }

// pluginImport runs `history import -importer NAME`: the named
// history_importer block of the plugin configuration (a built-in CSV reader
// or an external plugin over go-plugin) streams [from, to) and the tenants'
// series and reimage events go into the store.
func pluginImport(ctx context.Context, store *history.Store, configPath, name, from, to string, tenants []string) error {
	src, err := os.ReadFile(configPath)
	if err != nil {
		return err
	}
	cfg, err := manager.ParseConfig(src, configPath)
	if err != nil {
		return err
	}
	start, err := csvfmt.ParseTime(from)
	if err != nil {
		return fmt.Errorf("-from: %w", err)
	}
	end, err := csvfmt.ParseTime(to)
	if err != nil || !end.After(start) {
		return fmt.Errorf("-to %q: want a time after -from", to)
	}
	builtins := manager.Builtins{HistoryImporters: map[string]func(hclog.Logger) (historyimporter.Importer, error){}}
	for _, b := range []string{csvfmt.ImporterLong, csvfmt.ImporterReimages} {
		builtins.HistoryImporters[b] = func(hclog.Logger) (historyimporter.Importer, error) { return csvfmt.NewImporter(b) }
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "harvestctl", Level: hclog.Warn, Output: os.Stderr})
	m, err := manager.New(cfg, builtins, manager.Options{Logger: log})
	if err != nil {
		return err
	}
	defer m.Close()
	imp, err := m.HistoryImporter(name)
	if err != nil {
		return err
	}
	acc := newImportAccumulator()
	if err := imp.Import(ctx, historyimporter.Range{Start: start, End: end}, tenants, acc.add); err != nil {
		// nothing is written from a stream that did not finish
		return fmt.Errorf("importer %s: %w (nothing written)", name, err)
	}
	return acc.write(ctx, store, name)
}

// importAccumulator folds streamed chunks into each tenant's 2-minute
// slots (the mean of every node's values in a slot) and collects reimages.
type importAccumulator struct {
	slots    map[string]map[int64][2]float64 // tenant -> slot start (unix) -> sum, count
	nodes    map[string]map[string]bool
	reimages map[string][]history.Reimage
}

func newImportAccumulator() *importAccumulator {
	return &importAccumulator{slots: map[string]map[int64][2]float64{}, nodes: map[string]map[string]bool{},
		reimages: map[string][]history.Reimage{}}
}

func (a *importAccumulator) add(r historyimporter.Record) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if e := r.Reimage; e != nil {
		a.reimages[e.Tenant] = append(a.reimages[e.Tenant], history.Reimage{Node: e.Node, Time: e.Time.UTC()})
		return nil
	}
	c := r.Series
	if a.slots[c.Tenant] == nil {
		a.slots[c.Tenant], a.nodes[c.Tenant] = map[int64][2]float64{}, map[string]bool{}
	}
	if c.Node != "" {
		a.nodes[c.Tenant][c.Node] = true
	}
	for i, v := range c.Values {
		if math.IsNaN(v) {
			continue
		}
		t := c.Start.Add(time.Duration(int64(i)*c.StepSeconds) * time.Second).UTC().Truncate(history.Slot)
		s := a.slots[c.Tenant][t.Unix()]
		a.slots[c.Tenant][t.Unix()] = [2]float64{s[0] + v, s[1] + 1}
	}
	return nil
}

func (a *importAccumulator) write(ctx context.Context, store *history.Store, name string) error {
	points, events := 0, 0
	for tenant, slots := range a.slots {
		id, err := history.ParseTenantID(tenant)
		if err != nil {
			return err
		}
		keys := make([]int64, 0, len(slots))
		for k := range slots {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		if len(keys) == 0 {
			continue
		}
		first := time.Unix(keys[0], 0).UTC()
		n := int(time.Unix(keys[len(keys)-1], 0).Sub(first)/history.Slot) + 1
		s := history.Series{Start: first, Values: make([]float64, n)}
		for i := range s.Values {
			s.Values[i] = math.NaN()
		}
		for _, k := range keys {
			v := slots[k]
			s.Values[int(time.Unix(k, 0).Sub(first)/history.Slot)] = v[0] / v[1]
		}
		var nodes []string
		for n := range a.nodes[tenant] {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		if err := store.PutSeries(ctx, id, s, nodes); err != nil {
			return err
		}
		points += len(keys)
	}
	for tenant, evs := range a.reimages {
		id, err := history.ParseTenantID(tenant)
		if err != nil {
			return err
		}
		if err := store.AddReimages(ctx, id, evs); err != nil {
			return err
		}
		events += len(evs)
	}
	fmt.Printf("imported %d slots of %d tenants and %d reimage events through importer %s\n", points, len(a.slots), events, name)
	return nil
}
