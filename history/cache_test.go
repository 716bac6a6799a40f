package history

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/kv"
)

// wave is a deterministic series for tenant k over days [from, from+n).
func wave(k int, from Date, n int) Series {
	v := make([]float64, n*SlotsPerDay)
	for i := range v {
		v[i] = 30 + 20*math.Sin(float64(i+k*37)/50) + float64(k%7)
		if (i+k)%97 == 0 {
			v[i] = math.NaN()
		}
	}
	return Series{Start: from.Time(), Values: v}
}

func sameSeries(t *testing.T, what string, a, b Series) {
	t.Helper()
	if !a.Start.Equal(b.Start) || len(a.Values) != len(b.Values) {
		t.Fatalf("%s: %s+%d vs %s+%d", what, a.Start, len(a.Values), b.Start, len(b.Values))
	}
	for i := range a.Values {
		x, y := a.Values[i], b.Values[i]
		if math.IsNaN(x) != math.IsNaN(y) || (!math.IsNaN(x) && x != y) {
			t.Fatalf("%s: slot %d: %v vs %v", what, i, x, y)
		}
	}
}

// TestCacheIncrementalEqualsCold: after a new day and a backfilled old
// day, an incremental refresh reads only those two days and holds what a
// cold read of everything holds, which is what Store.Series reads.
func TestCacheIncrementalEqualsCold(t *testing.T) {
	kv := kv.NewMem()
	s := NewStore(kv, "")
	if f, err := s.InitFormat(ctx); err != nil || f != LatestFormat {
		t.Fatalf("new installation's format %d, %v", f, err)
	}
	first := DateOf(t0)
	const tenants, days = 12, 10
	ids := make([]TenantID, tenants)
	bulk := map[TenantID]Series{}
	for k := range ids {
		ids[k] = TenantID{"env", fmt.Sprintf("fn-%d", k)}
		if err := s.EnsureTenant(ctx, ids[k], "n"); err != nil {
			t.Fatal(err)
		}
		bulk[ids[k]] = wave(k, first, days)
	}
	if err := s.PutDays(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	last := first + days // the new day
	inc, _ := s.NewCache()
	first-- // a day without history in the range: it must not count as changed
	st, err := inc.Refresh(ctx, first, last)
	if err != nil || !st.Cold || st.DaysRead != days+2 {
		t.Fatalf("cold refresh %+v, %v", st, err)
	}
	// a day arrives the way drivers write it, and an import rewrites day 3 of one tenant
	for k, id := range ids {
		if err := s.PutSeries(ctx, id, wave(k+1, last, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutSeries(ctx, ids[0], Series{Start: (first + 4).Time(), Values: []float64{99, 98}}, nil); err != nil {
		t.Fatal(err)
	}
	st, err = inc.Refresh(ctx, first, last)
	if err != nil || st.Cold || st.DaysRead != 2 || st.DaysChecked != days+2 {
		t.Fatalf("incremental refresh %+v, %v: want 2 of %d days read", st, err, days+2)
	}
	cold, _ := s.NewCache()
	if _, err := cold.Refresh(ctx, first, last); err != nil {
		t.Fatal(err)
	}
	from, to := first.Time(), (last + 1).Time()
	for _, id := range ids {
		want, err := s.Series(ctx, id, from, to)
		if err != nil {
			t.Fatal(err)
		}
		sameSeries(t, id.String()+" incremental", inc.Series(id.String(), from, to, nil), want)
		sameSeries(t, id.String()+" cold", cold.Series(id.String(), from, to, nil), want)
	}
	if got := inc.Series(ids[0].String(), from, to, nil).Values[4*SlotsPerDay]; got != 99 {
		t.Fatalf("backfilled slot reads %v, want 99", got)
	}
	// nothing changed: nothing is read
	if st, err = inc.Refresh(ctx, first, last); err != nil || st.DaysRead != 0 || st.Keys != 0 {
		t.Fatalf("idle refresh read %+v, %v", st, err)
	}
}

// TestSealBundlesOwnKeysAndLateWritesWin: sealing turns tenants' own keys
// into bundles without changing what is read; a key written after the
// seal still wins for its slots.
func TestSealBundlesOwnKeysAndLateWritesWin(t *testing.T) {
	kv := kv.NewMem()
	s := NewStore(kv, "")
	if err := s.SetFormat(ctx, 3); err != nil {
		t.Fatal(err)
	}
	d := DateOf(t0)
	ids := []TenantID{{"a", "x"}, {"b", "y"}, {"c", "z"}}
	before := map[TenantID]Series{}
	for k, id := range ids {
		samples := []Sample{{Node: "n1", Time: t0.Add(time.Duration(k) * Slot), CPU: 10 + float64(k)}, {Node: "n2", Time: t0.Add(time.Duration(k) * Slot), CPU: 20}}
		if err := s.AppendSamples(ctx, id, samples); err != nil {
			t.Fatal(err)
		}
		before[id], _ = s.Series(ctx, id, t0, t0.Add(time.Hour))
	}
	st, err := s.Seal(ctx, d, d)
	if err != nil || st.Days != 1 || st.Tenants != 3 || st.Deleted != 3 {
		t.Fatalf("seal %+v, %v", st, err)
	}
	keys, _, _ := kv.Keys(ctx, "harvest/days/", "")
	if len(keys) != 1 || keys[0] != "harvest/days/2026-11-01/b/0-of-1" {
		t.Fatalf("keys after sealing: %v", keys)
	}
	for _, id := range ids {
		after, err := s.Series(ctx, id, t0, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		sameSeries(t, id.String(), after, before[id])
	}
	if err := s.AppendSamples(ctx, ids[0], []Sample{{Node: "n3", Time: t0, CPU: 70}}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Series(ctx, ids[0], t0, t0.Add(time.Hour))
	if got.Values[0] != 70 || got.Values[1] == got.Values[1] {
		t.Fatalf("after a late write slots read %v, want 70 then a gap", got.Values[:2])
	}
	if st, err = s.Seal(ctx, d, d); err != nil || st.Deleted != 1 {
		t.Fatalf("second seal %+v, %v", st, err)
	}
	again, _ := s.Series(ctx, ids[0], t0, t0.Add(time.Hour))
	sameSeries(t, "resealed", again, got)
}

// TestCacheNamesTheCorruptKey: a bundle or a tenant's value that does not
// decode is reported with its key, and the refresh goes on.
func TestCacheNamesTheCorruptKey(t *testing.T) {
	kv := kv.NewMem()
	s := NewStore(kv, "")
	_ = s.SetFormat(ctx, 3)
	if err := s.PutDays(ctx, map[TenantID]Series{tenant: wave(1, DateOf(t0), 1)}); err != nil {
		t.Fatal(err)
	}
	key := "harvest/days/2026-11-01/b/0-of-1"
	raw, _, _ := kv.Get(ctx, key)
	raw[20] ^= 0xff
	kv.Put(key, raw)
	c, _ := s.NewCache()
	if _, err := c.Refresh(ctx, DateOf(t0), DateOf(t0)); err != nil {
		t.Fatal(err) // one bad value must not stop the others
	}
	var corrupt *CorruptError
	if bb := c.BrokenBundles(); len(bb) != 1 || !errors.As(bb[0], &corrupt) || corrupt.Key != key {
		t.Fatalf("broken bundles %v, want one naming %s", bb, key)
	}
	own := "harvest/days/2026-11-01/t/" + tenant.String()
	kv.Put(own, []byte("HVD3 not really"))
	if _, err := c.Refresh(ctx, DateOf(t0), DateOf(t0)); err != nil {
		t.Fatal(err)
	}
	if err := c.Corrupt()[tenant.String()]; !errors.As(err, &corrupt) || corrupt.Key != own {
		t.Fatalf("tenant's corrupt value %v, want one naming %s", err, own)
	}
	kv.Delete(ctx, own)
	if _, err := s.Series(ctx, tenant, t0, t0.Add(time.Hour)); !errors.As(err, &corrupt) || corrupt.Key != key {
		t.Fatalf("series error %v, want one naming %s", err, key)
	}
}
