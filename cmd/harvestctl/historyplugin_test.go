package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

// TestPluginImportThroughTheBuiltInCSVImporter: `history import -importer`
// with the built-in csv-long block imports exactly the asked range of the
// asked tenant, slot for slot, through the plugin manager.
func TestPluginImportThroughTheBuiltInCSVImporter(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	b.WriteString("tenant,timestamp,cpu_percent\n")
	for i := range 30 {
		at := t0.Add(time.Duration(i) * history.Slot).Format(time.RFC3339)
		fmt.Fprintf(&b, "search/frontend,%s,%d\nads/indexer,%s,50\n", at, i, at)
	}
	csv := filepath.Join(dir, "long.csv")
	cfg := filepath.Join(dir, "plugins.hcl")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("history_importer \"csv\" {\n  driver = \"csv-long\"\n  config = { path = %q }\n}\n", csv)), 0o644); err != nil {
		t.Fatal(err)
	}
	store := history.NewStore(kv.NewMem(), "")
	ctx := context.Background()
	from, to := t0.Add(10*history.Slot), t0.Add(20*history.Slot)
	if err := pluginImport(ctx, store, cfg, "csv", from.Format(time.RFC3339), to.Format(time.RFC3339), []string{"search/frontend"}); err != nil {
		t.Fatal(err)
	}
	got, err := store.Series(ctx, history.TenantID{Environment: "search", Function: "frontend"}, t0, t0.Add(30*history.Slot))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got.Values {
		at := got.Start.Add(time.Duration(i) * history.Slot)
		inRange := !at.Before(from) && at.Before(to)
		if inRange && v != float64(at.Sub(t0)/history.Slot) || !inRange && !math.IsNaN(v) {
			t.Fatalf("slot %s: %v (in range %v)", at, v, inRange)
		}
	}
	if other, _ := store.Tenants(ctx); len(other) != 1 {
		t.Fatalf("tenants after a one-tenant import: %+v", other)
	}
	if err := pluginImport(ctx, store, cfg, "nosuch", from.Format(time.RFC3339), to.Format(time.RFC3339), nil); err == nil {
		t.Fatal("an unknown importer block imported")
	}
}
