package history

import (
	"math"
	"os"
	"testing"
	"time"
)

// day-v2.bin was written by the previous release's encoder (commit 8e808fb,
// history/day.go): slot i holds 1 + i%3 samples of ((i*37 + n*11) % 10000) / 100
// for n = 0.., every fifth slot a gap.
func goldenV2Mean(i int) float64 {
	if i%5 == 4 {
		return math.NaN()
	}
	sum, n := 0.0, 1+i%3
	for k := 0; k < n; k++ {
		sum += float64((i*37+k*11)%10000) / 100
	}
	return sum / float64(n)
}

// TestUpgradeReadsThePreviousFormat: history as the previous release wrote
// it (format 2, its own bytes) is read by this release, through
// Store.Series and the placer's cache; while no marker is set this
// release's writers keep writing format 2 where the previous release's
// readers look; once the marker is raised, new samples go to format 3 and
// both are read together.
func TestUpgradeReadsThePreviousFormat(t *testing.T) {
	golden, err := os.ReadFile("testdata/day-v2.bin")
	if err != nil {
		t.Fatal(err)
	}
	kv := NewMemKV()
	s := NewStore(kv, "")
	legacyKey := "harvest/cpu/search/frontend/2026-11-01"
	kv.Put(legacyKey, golden)
	if err := s.EnsureTenant(ctx, tenant, "n1"); err != nil {
		t.Fatal(err)
	}
	if f, err := s.InitFormat(ctx); err != nil || f != 2 {
		t.Fatalf("format with format-2 history present: %d, %v (want 2)", f, err)
	}
	check := func(what string, got Series) {
		t.Helper()
		for i := 0; i < SlotsPerDay; i++ {
			want := goldenV2Mean(i)
			if math.IsNaN(want) != math.IsNaN(got.Values[i]) || (!math.IsNaN(want) && math.Abs(got.Values[i]-want) > 0.0051) {
				t.Fatalf("%s: slot %d reads %v, the previous release wrote %v", what, i, got.Values[i], want)
			}
		}
	}
	got, err := s.Series(ctx, tenant, t0, t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	check("Store.Series", got)
	c, _ := s.NewCache()
	if _, err := c.Refresh(ctx, DateOf(t0), DateOf(t0)); err != nil {
		t.Fatal(err)
	}
	check("cache", c.Series(tenant.String(), t0, t0.Add(24*time.Hour), nil))

	// during the upgrade (no marker) an append rewrites the format-2 value
	gap := t0.Add(4 * Slot)
	if err := s.AppendSamples(ctx, tenant, []Sample{{Node: "n1", Time: gap, CPU: 42}}); err != nil {
		t.Fatal(err)
	}
	raw, _, _ := kv.Get(ctx, legacyKey)
	if len(raw) != dayEncodedLen2 || string(raw[:4]) != "HVD2" {
		t.Fatalf("an append before the marker wrote %d bytes %q..., not format 2", len(raw), raw[:4])
	}
	if keys, _, _ := kv.Keys(ctx, "harvest/days/", ""); len(keys) != 0 {
		t.Fatalf("format-3 keys before the marker: %v", keys)
	}

	// the operator raises the marker: new samples go to format 3
	if err := s.SetFormat(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendSamples(ctx, tenant, []Sample{{Node: "n2", Time: gap, CPU: 40}}); err != nil {
		t.Fatal(err)
	}
	if raw2, _, _ := kv.Get(ctx, legacyKey); string(raw2) != string(raw) {
		t.Fatal("an append after the marker rewrote the format-2 value")
	}
	got, err = s.Series(ctx, tenant, t0, t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got.Values[4] != 41 {
		t.Fatalf("slot with a sample in each format reads %v, want their mean 41", got.Values[4])
	}
	got.Values[4] = math.NaN()
	check("merged", got)
	if _, err := c.Refresh(ctx, DateOf(t0), DateOf(t0)); err != nil {
		t.Fatal(err)
	}
	if v := c.Series(tenant.String(), t0, t0.Add(24*time.Hour), nil).Values[4]; v != 41 {
		t.Fatalf("cache reads the merged slot as %v, want 41", v)
	}
}
