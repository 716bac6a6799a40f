package pluginimport

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

// fakeImporter emits its records, then returns err.
type fakeImporter struct {
	records []historyimporter.Record
	err     error
}

func (f *fakeImporter) SetConfig(map[string]string) error { return nil }
func (f *fakeImporter) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "fake", Type: base.PluginTypeHistoryImporter}, nil
}
func (f *fakeImporter) Import(_ context.Context, _ historyimporter.Range, _ []string, emit func(historyimporter.Record) error) error {
	for _, r := range f.records {
		if err := emit(r); err != nil {
			return err
		}
	}
	return f.err
}

var (
	t0       = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	frontend = history.TenantID{Environment: "search", Function: "frontend"}
	indexer  = history.TenantID{Environment: "ads", Function: "indexer"}
	all      = historyimporter.Range{Start: t0, End: t0.Add(24 * time.Hour)}
)

func series(tenant, node string, start time.Time, step int64, vals ...float64) historyimporter.Record {
	return historyimporter.Record{Series: &historyimporter.SeriesChunk{Tenant: tenant, Node: node, Start: start, StepSeconds: step, Values: vals}}
}

func reimage(tenant, node string, at time.Time) historyimporter.Record {
	return historyimporter.Record{Reimage: &historyimporter.Reimage{Tenant: tenant, Node: node, Time: at}}
}

func slots(t *testing.T, store *history.Store, id history.TenantID, n int) []float64 {
	t.Helper()
	s, err := store.Series(context.Background(), id, t0, t0.Add(time.Duration(n)*history.Slot))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Start.Equal(t0) {
		t.Fatalf("series starts at %s", s.Start)
	}
	return s.Values[:n]
}

// sameSlots compares to 0.005 point: history keeps slot means to 0.01.
func sameSlots(got, want []float64) bool {
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || !math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 0.005+1e-9 {
			return false
		}
	}
	return true
}

// TestRunFoldsChunksIntoSlots: every node's values in a slot are averaged,
// whatever the step; gaps stay gaps; nodes and reimages are stored.
func TestRunFoldsChunksIntoSlots(t *testing.T) {
	ctx := context.Background()
	store := history.NewStore(kv.NewMem(), "")
	nan := math.NaN()
	imp := &fakeImporter{records: []historyimporter.Record{
		series("search/frontend", "a", t0, 120, 10, 20, nan, 40),
		series("search/frontend", "b", t0, 60, 30, 50, 40, 40), // two samples a slot
		series("ads/indexer", "", t0.Add(history.Slot), 120, 70),
		series("mail/store", "x", t0, 120, nan, nan), // only gaps: not written
		reimage("search/frontend", "a", t0.Add(time.Hour)),
		reimage("ads/indexer", "c", t0.Add(2*time.Hour)),
	}}
	rep, err := Run(ctx, store, imp, all, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep != (Report{Slots: 3 + 1, Tenants: 2, Reimages: 2}) {
		t.Fatalf("report %+v", rep)
	}
	// slot 0: (10+30+50)/3, slot 1: (20+40+40)/3, slot 2: gap, slot 3: 40
	if got, want := slots(t, store, frontend, 5), []float64{30, 100.0 / 3, nan, 40, nan}; !sameSlots(got, want) {
		t.Fatalf("frontend slots %v, want %v", got, want)
	}
	if got := slots(t, store, indexer, 3); !sameSlots(got, []float64{nan, 70, nan}) {
		t.Fatalf("indexer slots %v", got)
	}
	tenants, err := store.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tenants) != 2 || tenants[0].ID() != indexer || tenants[1].ID() != frontend || strings.Join(tenants[1].Nodes, ",") != "a,b" {
		t.Fatalf("tenants %+v", tenants)
	}
	if evs, _ := store.Reimages(ctx, frontend); len(evs) != 1 || evs[0].Node != "a" || !evs[0].Time.Equal(t0.Add(time.Hour)) {
		t.Fatalf("reimages %+v", evs)
	}

	// An overlapping import replaces the slots it has and keeps the rest;
	// a reimage already stored is not added twice.
	imp.records = []historyimporter.Record{series("search/frontend", "a", t0.Add(3*history.Slot), 120, 5, 6), reimage("search/frontend", "a", t0.Add(time.Hour))}
	if _, err := Run(ctx, store, imp, all, nil); err != nil {
		t.Fatal(err)
	}
	if got := slots(t, store, frontend, 5); !sameSlots(got, []float64{30, 100.0 / 3, nan, 5, 6}) {
		t.Fatalf("frontend slots after the overlap %v", got)
	}
	if evs, _ := store.Reimages(ctx, frontend); len(evs) != 1 {
		t.Fatalf("reimages after the overlap %+v", evs)
	}
}

// TestRunWritesNothingUnlessTheStreamFinished: a stream that fails after
// records arrived, or that carries an invalid record, leaves the store as it
// was.
func TestRunWritesNothingUnlessTheStreamFinished(t *testing.T) {
	good := []historyimporter.Record{series("search/frontend", "a", t0, 120, 10, 20), reimage("search/frontend", "a", t0)}
	broken := errors.New("history importer: stream broken after 2 records")
	cases := map[string]struct {
		imp  *fakeImporter
		want string
	}{
		"stream broken": {&fakeImporter{records: good, err: broken}, "stream broken after 2 records (nothing written)"},
		"bad tenant":    {&fakeImporter{records: append(good, series("nofunction", "a", t0, 120, 1))}, `"nofunction"`},
		"value > 100":   {&fakeImporter{records: append(good, series("ads/indexer", "n", t0, 120, 1, 140))}, "CPU 140% is outside 0-100"},
		"empty record":  {&fakeImporter{records: append(good, historyimporter.Record{})}, "exactly one of series and reimage"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			kv := kv.NewMem()
			store := history.NewStore(kv, "")
			rep, err := Run(ctx, store, c.imp, all, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing written") {
				t.Fatalf("err = %v, want %q and nothing written", err, c.want)
			}
			if rep != (Report{}) {
				t.Fatalf("report %+v", rep)
			}
			if pairs, _ := kv.List(ctx, ""); len(pairs) != 0 {
				t.Fatalf("%d keys written", len(pairs))
			}
		})
	}
	if _, err := Run(context.Background(), history.NewStore(kv.NewMem(), ""), &fakeImporter{}, historyimporter.Range{Start: t0, End: t0}, nil); err == nil {
		t.Fatal("an empty range imported")
	}
}

// TestBuiltinsReadTheCSVFormats: the built-in csv-long and csv-reimages
// importers, as a plugin manager would run them, through Run.
func TestBuiltinsReadTheCSVFormats(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"long.csv":     "tenant,timestamp,cpu_percent\nsearch/frontend,2026-11-01T00:00:00Z,10\nsearch/frontend,2026-11-01T00:02:00Z,20\nsearch/frontend,2026-11-01T00:04:00Z,30\n",
		"reimages.csv": "tenant,node,timestamp\nsearch/frontend,a,2026-11-01T01:00:00Z\nsearch/frontend,b,2026-11-02T01:00:00Z\n",
	}
	for f, src := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := Builtins()
	if len(b) != 2 {
		t.Fatalf("built-ins %v", b)
	}
	ctx := context.Background()
	store := history.NewStore(kv.NewMem(), "")
	for driver, file := range map[string]string{"csv-long": "long.csv", "csv-reimages": "reimages.csv"} {
		imp, err := b[driver](hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		if err := imp.SetConfig(map[string]string{"path": filepath.Join(dir, file)}); err != nil {
			t.Fatal(err)
		}
		// the first day only, from the second slot
		if _, err := Run(ctx, store, imp, historyimporter.Range{Start: t0.Add(history.Slot), End: t0.Add(24 * time.Hour)}, nil); err != nil {
			t.Fatalf("%s: %v", driver, err)
		}
	}
	if got := slots(t, store, frontend, 4); !sameSlots(got, []float64{math.NaN(), 20, 30, math.NaN()}) {
		t.Fatalf("slots %v", got)
	}
	if evs, _ := store.Reimages(ctx, frontend); len(evs) != 1 || evs[0].Node != "a" {
		t.Fatalf("reimages %+v", evs)
	}
}
