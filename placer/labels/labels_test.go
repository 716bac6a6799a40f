package labels

import (
	"reflect"
	"testing"
)

func TestPlanLabelsClassifiedUnclassifiedAndStale(t *testing.T) {
	nodes := []Node{
		{ID: "1", Name: "a", Meta: map[string]string{TenantKey: "search/frontend"}},
		{ID: "2", Name: "b", Meta: map[string]string{TenantKey: "ads/indexer", ClassKey: "periodic-1", PatternKey: "periodic"}},
		{ID: "3", Name: "c", Meta: map[string]string{TenantKey: "mail/store", ClassKey: "constant-1", PatternKey: "constant"}},
		{ID: "4", Name: "d", Meta: map[string]string{ClassKey: "constant-1"}}, // no tenant: stale label
		{ID: "5", Name: "e", Meta: map[string]string{TenantKey: "new/tenant"}},
	}
	assign := map[string]Assignment{
		"search/frontend": {"constant-2", "constant"},
		"ads/indexer":     {"periodic-1", "periodic"},
		"mail/store":      {"unpredictable-1", "unpredictable"},
	}
	got := Plan(nodes, assign)
	want := []Update{
		{NodeID: "1", NodeName: "a", Set: map[string]string{ClassKey: "constant-2", PatternKey: "constant"}},
		{NodeID: "3", NodeName: "c", Set: map[string]string{ClassKey: "unpredictable-1", PatternKey: "unpredictable"}},
		{NodeID: "4", NodeName: "d", Set: map[string]string{}, Unset: []string{ClassKey}},
		{NodeID: "5", NodeName: "e", Set: map[string]string{ClassKey: Unclassified, PatternKey: Unclassified}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plan:\n got %+v\nwant %+v", got, want)
	}
	counts := Counts(nodes, got)
	if counts["periodic-1"] != 1 || counts[Unclassified] != 1 || counts["constant-1"] != 0 {
		t.Fatalf("counts %v", counts)
	}
	if m := Members(nodes, got); !reflect.DeepEqual(m["constant-2"], []string{"a"}) || !reflect.DeepEqual(m["periodic-1"], []string{"b"}) ||
		len(m["constant-1"]) != 0 {
		t.Fatalf("members %v", m)
	}
	// applying the plan and planning again changes nothing
	for i := range nodes {
		for _, u := range got {
			if u.NodeID == nodes[i].ID {
				for k, v := range u.Set {
					nodes[i].Meta[k] = v
				}
				for _, k := range u.Unset {
					delete(nodes[i].Meta, k)
				}
			}
		}
	}
	if again := Plan(nodes, assign); len(again) != 0 {
		t.Fatalf("plan not idempotent: %+v", again)
	}
}
