package history

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/kv"
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
	kv := kv.NewMem()
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

// bundle-v3.bin was written by the previous release's encoder (commit
// 9ce242a, history/bundle.go): day 2026-11-01 of search/frontend (off 0)
// and ads/bidder (off 500), slot i holding 1 + i%3 samples of
// ((i*37 + n*11 + off) % 10000) / 100 for n = 0.., every fifth slot a gap.
func goldenV3Mean(i, off int) float64 {
	if i%5 == 4 {
		return math.NaN()
	}
	sum, n := 0.0, 1+i%3
	for k := 0; k < n; k++ {
		sum += float64((i*37+k*11+off)%10000) / 100
	}
	return sum / float64(n)
}

// TestUpgradeReadsFormat3Bundles: a sealed day as the previous release
// bundled it (format 3) is read to 0.01 point; once the marker is raised to
// 4, sealing that day again writes a format-4 bundle, read back to 0.1
// point by Store.Series and the placer's cache alike, and still read after
// a rollback of the marker to 3.
func TestUpgradeReadsFormat3Bundles(t *testing.T) {
	golden, err := os.ReadFile("testdata/bundle-v3.bin")
	if err != nil {
		t.Fatal(err)
	}
	kv := kv.NewMem()
	s := NewStore(kv, "")
	if err := s.SetFormat(ctx, 3); err != nil {
		t.Fatal(err)
	}
	bidder := TenantID{"ads", "bidder"}
	for _, id := range []TenantID{tenant, bidder} {
		if err := s.EnsureTenant(ctx, id, "n-"+id.Function); err != nil {
			t.Fatal(err)
		}
	}
	kv.Put("harvest/days/2026-11-01/b/0-of-1", golden)
	day := t0.Add(24 * time.Hour)
	check := func(what string, id TenantID, off int, got Series, tolerance float64) {
		t.Helper()
		for i := 0; i < SlotsPerDay; i++ {
			want := goldenV3Mean(i, off)
			if i == 4 && id == tenant && !math.IsNaN(got.Values[i]) {
				want = 42 // appended after the upgrade, below
			}
			if math.IsNaN(want) != math.IsNaN(got.Values[i]) || (!math.IsNaN(want) && math.Abs(got.Values[i]-want) > tolerance) {
				t.Fatalf("%s, %s: slot %d reads %v, want %v within %v", what, id, i, got.Values[i], want, tolerance)
			}
		}
	}
	readBoth := func(what string, tolerance float64) {
		t.Helper()
		c, _ := s.NewCache()
		if _, err := c.Refresh(ctx, DateOf(t0), DateOf(t0)); err != nil {
			t.Fatal(err)
		}
		for id, off := range map[TenantID]int{tenant: 0, bidder: 500} {
			got, err := s.Series(ctx, id, t0, day)
			if err != nil {
				t.Fatal(err)
			}
			check(what+", Store.Series", id, off, got, tolerance)
			check(what+", cache", id, off, c.Series(id.String(), t0, day, nil), tolerance)
		}
	}
	readBoth("format-3 bundle", 0.0051)

	if err := s.SetFormat(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendSamples(ctx, tenant, []Sample{{Node: "n-frontend", Time: t0.Add(4 * Slot), CPU: 42}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Seal(ctx, DateOf(t0), DateOf(t0))
	if err != nil || st.Tenants != 2 || st.Deleted != 1 {
		t.Fatalf("seal after the upgrade: %+v, %v", st, err)
	}
	raw, _, _ := kv.Get(ctx, "harvest/days/2026-11-01/b/0-of-1")
	if string(raw[:4]) != "HVB4" {
		t.Fatalf("the day was sealed again as %q, not format 4", raw[:4])
	}
	// a mean of hundredths rounded to tenths is within 0.05 + 0.005 point
	readBoth("format-4 bundle", 0.0551)

	if err := s.SetFormat(ctx, 3); err != nil {
		t.Fatal(err)
	}
	readBoth("format-4 bundle after a rollback to 3", 0.0551)
}
