package classes

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/labels"
)

// TestIncrementalRefreshGivesTheColdReadsClasses: a placer that refreshed
// yesterday and then reads only the new day (plus today's, which drivers
// keep writing) publishes the class table a placer starting cold today
// publishes, survival figures included; and the incremental read re-reads
// only the days that changed.
func TestIncrementalRefreshGivesTheColdReadsClasses(t *testing.T) {
	ctx := context.Background()
	kv := kv.NewMem()
	store := history.NewStore(kv, "")
	if _, err := store.InitFormat(ctx); err != nil {
		t.Fatal(err)
	}
	p := synth.DefaultProfile(7, 24)
	p.Days = 33
	p.Start = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	dc := synth.Generate(p)
	var nodes []labels.Node
	old := map[history.TenantID]history.Series{}
	for _, tn := range dc.Tenants {
		if err := store.EnsureTenant(ctx, tn.ID, tn.Nodes...); err != nil {
			t.Fatal(err)
		}
		old[tn.ID] = history.Series{Start: tn.Series.Start, Values: tn.Series.Values[:32*history.SlotsPerDay]}
		for i, n := range tn.Nodes {
			nodes = append(nodes, labels.Node{ID: fmt.Sprint(tn.ID, i), Name: n, Meta: map[string]string{labels.TenantKey: tn.ID.String()},
				Attributes: map[string]string{contract.AttrCapacityCores: "16", contract.AttrReserveCores: "1"}})
		}
	}
	if err := store.PutDays(ctx, old); err != nil {
		t.Fatal(err)
	}
	day32 := p.Start.Add(32 * 24 * time.Hour)
	clock := day32.Add(-time.Minute) // yesterday, just before midnight
	refresher := func() *Refresher {
		return &Refresher{Store: store, Nodes: &fakeNodes{List: nodes}, Config: classify.Default(), Log: hclog.NewNullLogger(),
			Now: func() time.Time { return clock }, Retention: 42 * 24 * time.Hour}
	}
	warm := refresher()
	if _, err := warm.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// the new day arrives as drivers write it: each tenant's own key
	for _, tn := range dc.Tenants {
		s := history.Series{Start: day32, Values: tn.Series.Values[32*history.SlotsPerDay:]}
		if err := store.PutSeries(ctx, tn.ID, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	clock = day32.Add(23 * time.Hour)
	before := kv.Ops()
	incremental, err := warm.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	read := kv.Ops().Lists - before.Lists
	cold, err := refresher().Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cold.Classes) == 0 || !reflect.DeepEqual(incremental.Classes, cold.Classes) || !reflect.DeepEqual(incremental.Unclassified, cold.Unclassified) {
		t.Fatalf("incremental classes differ from a cold read:\n%+v\n%+v", incremental.Classes, cold.Classes)
	}
	if cold.Classes[0].Survival == nil {
		t.Fatal("no survival figures: the comparison left them out")
	}
	// the incremental refresh listed the new day with its values and the
	// tenant infos; a cold one lists every day in the window
	if read < 1 || read > 4 {
		t.Fatalf("incremental refresh made %d value lists, want the new day's and few others", read)
	}
}
