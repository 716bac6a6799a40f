package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/kv"
)

// TestExportReadsBothFormats: history export writes, through the bulk
// cache, what was imported into bundles and what a format-2 writer left.
func TestExportReadsBothFormats(t *testing.T) {
	ctx := context.Background()
	kv := kv.NewMem()
	store := history.NewStore(kv, "")
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
	old := history.TenantID{Environment: "mail", Function: "store"}
	if err := store.PutSeries(ctx, old, history.Series{Start: start, Values: []float64{11, 12}}, []string{"m1"}); err != nil {
		t.Fatal(err) // no marker yet: format 2
	}
	if err := store.SetFormat(ctx, 3); err != nil {
		t.Fatal(err)
	}
	bulk := history.TenantID{Environment: "search", Function: "frontend"}
	if err := store.EnsureTenant(ctx, bulk, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := store.PutDays(ctx, map[history.TenantID]history.Series{bulk: {Start: start, Values: []float64{21, 22, 23}}}); err != nil {
		t.Fatal(err)
	}
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	err := exportHistory(ctx, store, 3, "")
	os.Stdout = stdout
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	got, _, err := csvfmt.ParseLong(strings.NewReader(string(out)), csvfmt.LongOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[history.TenantID][]float64{old: {11, 12}, bulk: {21, 22, 23}} {
		s := got[id]
		if s.Observed() != len(want) {
			t.Fatalf("%s exported %d slots, want %d", id, s.Observed(), len(want))
		}
		for i, v := range want {
			if at := s.Values[int(start.Sub(s.Start)/history.Slot)+i]; at != v {
				t.Fatalf("%s slot %d exported as %v, want %v", id, i, at, v)
			}
		}
	}
}
