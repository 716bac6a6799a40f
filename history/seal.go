package history

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"
)

// SealAfter is how old a day must be before the placer seals it: drivers
// buffer at most two days of samples while Consul is away.
const SealAfter = 2

// SealStats says what Seal did.
type SealStats struct {
	Days    int // days sealed
	Tenants int // tenant days folded into bundles
	Deleted int // tenants' own keys removed
}

// Seal bundles every format-3 day in [from, to] that still has tenants'
// own keys: their slots over the day's bundles, rewritten as one value per
// ~64 tenants, then the own keys deleted, each only if nobody wrote it
// since (a late writer's key stays, and its slots keep winning on read).
// It does nothing while the format marker says 2.
func (s *Store) Seal(ctx context.Context, from, to Date) (SealStats, error) {
	var st SealStats
	l, ok := s.kv.(Lister)
	if !ok {
		return st, nil
	}
	f, err := s.Format(ctx)
	if err != nil || f < 3 {
		return st, err
	}
	for d := from; d <= to; d++ {
		own, _, err := l.Keys(ctx, s.keys.dayDir(d)+"t/", "")
		if err != nil {
			return st, err
		}
		if len(own) == 0 {
			continue
		}
		n, deleted, err := s.sealDay(ctx, l, d, nil, sealedResolution(f))
		if err != nil {
			return st, err
		}
		st.Days++
		st.Tenants += n
		st.Deleted += deleted
	}
	return st, nil
}

// PutDays imports whole days of many tenants at once, straight into the
// day's bundles (format 3; one write per ~64 tenants, not one per tenant
// day): each observed slot replaces what the tenant's day held, as
// PutSeries. Under format 2 it falls back to PutSeries per tenant.
// Tenants' infos must exist (EnsureTenant).
func (s *Store) PutDays(ctx context.Context, days map[TenantID]Series) error {
	f, err := s.Format(ctx)
	if err != nil {
		return err
	}
	l, ok := s.kv.(Lister)
	if f < 3 || !ok {
		for t, ser := range days {
			if err := s.PutSeries(ctx, t, ser, nil); err != nil {
				return err
			}
		}
		return nil
	}
	byDate := map[Date]map[string]*Day{}
	for t, ser := range days {
		if err := t.Validate(); err != nil {
			return err
		}
		for i, v := range ser.Values {
			if !math.IsNaN(v) && (v < 0 || v > 100 || math.IsInf(v, 0)) {
				return fmt.Errorf("history: tenant %s: value %v at slot %d outside 0-100", t, v, i)
			}
		}
		for d, day := range splitDays(ser) {
			if byDate[d] == nil {
				byDate[d] = map[string]*Day{}
			}
			byDate[d][t.String()] = day
		}
	}
	for _, d := range slices.Sorted(maps.Keys(byDate)) {
		if _, _, err := s.sealDay(ctx, l, d, byDate[d], sealedResolution(f)); err != nil {
			return err
		}
	}
	return nil
}

// sealedResolution is the bundle resolution a day format writes, in
// hundredths of a point (1: sums and counts as sent).
func sealedResolution(format int) uint16 {
	if format >= 4 {
		return sealedResolution4
	}
	return 1
}

// sealDay rewrites day d's bundles at resolution step with its own keys'
// slots and extra's over them, deletes the own keys it folded, and returns
// how many tenants the bundles hold and how many keys it deleted.
func (s *Store) sealDay(ctx context.Context, l Lister, d Date, extra map[string]*Day, step uint16) (int, int, error) {
	for attempt := 0; attempt < casAttempts; attempt++ {
		pairs, _, err := l.ListIndex(ctx, s.keys.dayDir(d))
		if err != nil {
			return 0, 0, err
		}
		full := map[string]*Day{}
		var own, old []Pair
		for _, p := range pairs {
			_, kind, _, _, _, err := s.keys.parseDayKey(p.Key)
			if err != nil {
				return 0, 0, &CorruptError{Key: p.Key, Err: err}
			}
			if kind == "t" {
				own = append(own, p)
				continue
			}
			old = append(old, p)
			if err := decodeBundle(p.Value, d, func(name string, e bundleEntry) error {
				day := &Day{Date: d}
				full[name] = day
				return e.day(day)
			}); err != nil {
				return 0, 0, &CorruptError{Key: p.Key, Err: err}
			}
		}
		for _, p := range own {
			_, _, t, _, _, _ := s.keys.parseDayKey(p.Key)
			day := &Day{}
			if err := day.UnmarshalBinary(p.Value); err != nil {
				return 0, 0, &CorruptError{Key: p.Key, Err: err}
			}
			overlayInto(full, t.String(), day)
		}
		for t, day := range extra {
			overlayInto(full, t, day)
		}
		done, err := s.writeBundles(ctx, l, d, full, old, step)
		if err != nil {
			return 0, 0, err
		}
		if !done {
			time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond) // a concurrent sealer won
			continue
		}
		deleted, err := deleteCASMany(ctx, l, own)
		return len(full), deleted, err
	}
	return 0, 0, fmt.Errorf("history: sealing %s: gave up after %d conflicting writes", d, casAttempts)
}

func overlayInto(full map[string]*Day, t string, day *Day) {
	if base := full[t]; base != nil {
		base.overlay(day)
	} else {
		full[t] = day
	}
}

// writeBundles writes full as the day's bundles, each with a check-and-set
// against what was listed (old), and deletes old bundles of another count.
// False: another writer changed a bundle first.
func (s *Store) writeBundles(ctx context.Context, l Lister, d Date, full map[string]*Day, old []Pair, step uint16) (bool, error) {
	n := bundleCount(len(full))
	parts := make([]map[string]*Day, n)
	for i := range parts {
		parts[i] = map[string]*Day{}
	}
	for _, t := range slices.Sorted(maps.Keys(full)) {
		parts[bundleOf(t, n)][t] = full[t]
	}
	index := map[string]uint64{}
	for _, p := range old {
		index[p.Key] = p.Index
	}
	for i, part := range parts {
		key := s.keys.bundle(d, i, n)
		ok, err := s.kv.CAS(ctx, key, encodeBundle(d, part, step), index[key])
		if err != nil {
			return false, fmt.Errorf("history: write %s: %w", key, err)
		}
		if !ok {
			return false, nil
		}
		delete(index, key)
	}
	var stale []Pair
	for _, p := range old {
		if _, ok := index[p.Key]; ok {
			stale = append(stale, p)
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].Key < stale[j].Key })
	_, err := deleteCASMany(ctx, l, stale)
	return true, err
}

// deleteCASMany deletes each pair's key if its index is unchanged and
// returns how many went.
func deleteCASMany(ctx context.Context, l Lister, pairs []Pair) (int, error) {
	if b, ok := l.(interface {
		DeleteCASBatch(context.Context, []Pair) (int, error)
	}); ok {
		return b.DeleteCASBatch(ctx, pairs)
	}
	n := 0
	for _, p := range pairs {
		ok, err := l.DeleteCAS(ctx, p.Key, p.Index)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}
