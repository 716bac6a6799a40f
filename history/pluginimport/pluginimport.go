// Package pluginimport imports tenant history through a history-importer
// plugin (plugins/historyimporter) into the history store: it streams a
// time range, folds the streamed chunks into each tenant's 2-minute slots
// (the mean of every node's values in a slot) and collects reimage events,
// and writes them only once the importer said the whole range was sent. A
// stream that breaks, a record that is malformed (a bad tenant name, a value
// outside 0-100) or a cancelled context writes nothing.
//
// `harvestctl history import -importer` and the placer's history_import loop
// both import this way, and register the same built-in importers (Builtins).
//
// Writes replace slots (history.Store.PutSeries: each observed slot replaces
// what the day held; gaps leave it) and add reimages without duplicates
// (history.Store.AddReimages), so importing overlapping ranges is harmless.
package pluginimport

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

// Builtins returns the built-in history importers by driver name (csv-long
// and csv-reimages), for manager.Builtins.HistoryImporters.
func Builtins() map[string]func(hclog.Logger) (historyimporter.Importer, error) {
	out := map[string]func(hclog.Logger) (historyimporter.Importer, error){}
	for _, name := range []string{csvfmt.ImporterLong, csvfmt.ImporterReimages} {
		out[name] = func(hclog.Logger) (historyimporter.Importer, error) { return csvfmt.NewImporter(name) }
	}
	return out
}

// Report is what one import wrote.
type Report struct {
	Slots    int // 2-minute slots written, over every tenant
	Tenants  int // tenants whose series were written
	Reimages int // reimage events handed to the store (duplicates of stored ones are dropped there)
}

// Run imports r for the tenants named ("environment/function"; every tenant
// the importer knows when none are) from importer into store. It writes
// nothing unless the importer finished the range without error and every
// record was valid; once writing has started, a store error stops it
// part-way (a later import of the same range completes it).
func Run(ctx context.Context, store *history.Store, importer historyimporter.Importer, r historyimporter.Range, tenants []string) (Report, error) {
	if !r.End.After(r.Start) {
		return Report{}, fmt.Errorf("import range [%s, %s): the end must be after the start", r.Start, r.End)
	}
	acc := newAccumulator()
	if err := importer.Import(ctx, r, tenants, acc.add); err != nil {
		return Report{}, fmt.Errorf("%w (nothing written)", err)
	}
	if err := ctx.Err(); err != nil { // an importer that ignored ctx
		return Report{}, fmt.Errorf("%w (nothing written)", err)
	}
	return acc.write(ctx, store)
}

// accumulator folds streamed chunks into each tenant's 2-minute slots and
// collects reimages.
type accumulator struct {
	ids      map[string]history.TenantID
	slots    map[string]map[int64][2]float64 // tenant -> slot start (unix) -> sum, count
	nodes    map[string]map[string]bool
	reimages map[string][]history.Reimage
}

func newAccumulator() *accumulator {
	return &accumulator{ids: map[string]history.TenantID{}, slots: map[string]map[int64][2]float64{},
		nodes: map[string]map[string]bool{}, reimages: map[string][]history.Reimage{}}
}

// tenant checks a streamed tenant name once.
func (a *accumulator) tenant(name string) error {
	if _, ok := a.ids[name]; ok {
		return nil
	}
	id, err := history.ParseTenantID(name)
	if err != nil {
		return err
	}
	a.ids[name] = id
	return nil
}

func (a *accumulator) add(r historyimporter.Record) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if e := r.Reimage; e != nil {
		if err := a.tenant(e.Tenant); err != nil {
			return err
		}
		a.reimages[e.Tenant] = append(a.reimages[e.Tenant], history.Reimage{Node: e.Node, Time: e.Time.UTC()})
		return nil
	}
	c := r.Series
	if err := a.tenant(c.Tenant); err != nil {
		return err
	}
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
		at := c.Start.Add(time.Duration(int64(i)*c.StepSeconds) * time.Second).UTC()
		if v < 0 || v > 100 || math.IsInf(v, 0) {
			return fmt.Errorf("tenant %s node %q at %s: CPU %v%% is outside 0-100", c.Tenant, c.Node, at.Format(time.RFC3339), v)
		}
		k := at.Truncate(history.Slot).Unix()
		s := a.slots[c.Tenant][k]
		a.slots[c.Tenant][k] = [2]float64{s[0] + v, s[1] + 1}
	}
	return nil
}

// write puts every tenant's series and reimages into the store, tenants in
// name order.
func (a *accumulator) write(ctx context.Context, store *history.Store) (Report, error) {
	var rep Report
	for _, tenant := range sortedKeys(a.slots) {
		slots := a.slots[tenant]
		if len(slots) == 0 { // only gaps
			continue
		}
		keys := sortedKeys(slots)
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
		if err := store.PutSeries(ctx, a.ids[tenant], s, sortedKeys(a.nodes[tenant])); err != nil {
			return rep, fmt.Errorf("tenant %s: %w", tenant, err)
		}
		rep.Slots += len(keys)
		rep.Tenants++
	}
	for _, tenant := range sortedKeys(a.reimages) {
		evs := a.reimages[tenant]
		if err := store.AddReimages(ctx, a.ids[tenant], evs); err != nil {
			return rep, fmt.Errorf("tenant %s reimages: %w", tenant, err)
		}
		rep.Reimages += len(evs)
	}
	return rep, nil
}

func sortedKeys[K string | int64, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
