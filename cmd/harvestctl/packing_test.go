package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
)

func TestPrintPackingListsReleasableNodes(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	empty := now.Add(-15 * time.Minute)
	var b bytes.Buffer
	printPacking(&b, api.PackingReport{Active: true, Reason: "medium first", HighThreshold: 0.6, ReleaseAfter: "10m0s", Updated: now,
		Nodes: []api.PackingNode{
			{Name: "client-1", Tier: "medium", UsedMB: 800, HarvestMB: 3584},
			{Name: "client-2", Tier: "low", HarvestMB: 3584, EmptySince: &empty, Releasable: true},
		}}, now)
	out := b.String()
	for _, want := range []string{"Packing on", "high at 60%", "1      client-1  medium", "15m0s", "1 node(s) empty of harvested work for at least 10m0s can be scaled in or released: client-2"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
