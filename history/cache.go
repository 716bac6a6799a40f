package history

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Cache keeps every tenant's recent days in memory, as DayMeans, for the
// placer's class refreshes: a refresh asks Consul, per day, only whether
// anything under days/<date>/ changed (the X-Consul-Index of a keys list,
// which is the highest ModifyIndex under the prefix, deletions included)
// and re-reads only the days that did, each with one recursive list. A cold
// cache reads every day once, Concurrency days at a time. Format-2 history
// (cpu/<env>/<function>/<date>, before the marker was raised) is read per
// tenant, and again only when something under cpu/ changed.
type Cache struct {
	store *Store
	// Concurrency bounds the days read at once (default 4).
	Concurrency int

	mu          sync.Mutex
	days        map[Date]*cachedDay
	legacy      map[Date]map[string]*Day
	legacyBad   map[string]error // tenant -> its format-2 value that does not decode
	legacyStamp uint64
	tenants     []TenantInfo
	tenantStamp uint64
}

type cachedDay struct {
	stamp   uint64
	tenants map[string]*DayMeans
	corrupt map[string]error // tenant -> its own value that does not decode
	broken  []error          // bundles that do not decode (their tenants miss the day)
}

// CacheStats says what one Refresh read.
type CacheStats struct {
	Cold        bool // nothing was cached before
	DaysChecked int  // days whose index was asked
	DaysRead    int  // days listed with their values
	Keys        int  // values decoded (tenant days and bundles)
	Bytes       int  // bytes of those values
	Legacy      bool // format-2 history was read
	Took        time.Duration
	InfosTook   time.Duration // of which reading the tenant infos
}

// NewCache returns an empty cache over the store's KV, which must be a
// Lister (kv.Consul and kv.Mem are).
func (s *Store) NewCache() (*Cache, error) {
	if _, ok := s.kv.(Lister); !ok {
		return nil, errors.New("history: the KV cannot list with an index")
	}
	return &Cache{store: s, days: map[Date]*cachedDay{}}, nil
}

// Refresh brings the days [from, to] up to date and forgets the others.
// A value that does not decode fails the refresh with a *CorruptError
// naming its key.
func (c *Cache) Refresh(ctx context.Context, from, to Date) (CacheStats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	l := c.store.kv.(Lister)
	st := CacheStats{Cold: len(c.days) == 0 && c.tenants == nil}
	if err := c.refreshTenants(ctx, l); err != nil {
		return st, err
	}
	st.InfosTook = time.Since(start)
	legacyChanged, err := c.refreshLegacy(ctx, l, from, to)
	if err != nil {
		return st, err
	}
	st.Legacy = legacyChanged
	for d := range c.days {
		if d < from || d > to {
			delete(c.days, d)
		}
	}
	conc := c.Concurrency
	if conc <= 0 {
		conc = 4
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	for d := from; d <= to; d++ {
		g.Go(func() error {
			dirs, stamp, err := l.Keys(gctx, c.store.keys.dayDir(d), "/")
			if err != nil {
				return fmt.Errorf("history: list %s: %w", c.store.keys.dayDir(d), err)
			}
			if len(dirs) == 0 {
				stamp = 0 // Consul gives an empty prefix the whole store's index
			}
			mu.Lock()
			st.DaysChecked++
			old := c.days[d]
			mu.Unlock()
			if old != nil && old.stamp == stamp && !legacyChanged {
				return nil
			}
			day, keys, bytes, err := c.readDay(gctx, l, d)
			if err != nil {
				return err
			}
			mu.Lock()
			c.days[d] = day
			st.DaysRead++
			st.Keys += keys
			st.Bytes += bytes
			mu.Unlock()
			return nil
		})
	}
	err = g.Wait()
	st.Took = time.Since(start)
	return st, err
}

// readDay lists one day and folds its bundles, tenants' own keys and any
// format-2 values into DayMeans.
func (c *Cache) readDay(ctx context.Context, l Lister, d Date) (*cachedDay, int, int, error) {
	pairs, stamp, err := l.ListIndex(ctx, c.store.keys.dayDir(d))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("history: list %s: %w", c.store.keys.dayDir(d), err)
	}
	if len(pairs) == 0 {
		stamp = 0 // as in Refresh: an empty prefix has the whole store's index
	}
	own := map[string]*Day{}
	bytes := 0
	var bundles []Pair
	var corrupt map[string]error
	var broken []error
	for _, p := range pairs {
		bytes += len(p.Value)
		_, kind, t, _, _, err := c.store.keys.parseDayKey(p.Key)
		if err != nil {
			broken = append(broken, &CorruptError{Key: p.Key, Err: err})
			continue
		}
		if kind == "b" {
			bundles = append(bundles, p)
			continue
		}
		day := &Day{}
		if err = day.UnmarshalBinary(p.Value); err == nil && day.Date != d {
			err = fmt.Errorf("holds day %s", day.Date)
		}
		if err != nil {
			if corrupt == nil {
				corrupt = map[string]error{}
			}
			corrupt[t.String()] = &CorruptError{Key: p.Key, Err: err}
			continue
		}
		own[t.String()] = day
	}
	legacy := c.legacy[d]
	// A tenant only in a bundle decodes straight into its means; one with
	// its own key or a format-2 value goes through a Day to be combined.
	means := map[string]*DayMeans{}
	full := map[string]*Day{}
	for _, p := range bundles {
		got := map[string]*DayMeans{}
		gotFull := map[string]*Day{}
		err := decodeBundle(p.Value, d, func(name string, e bundleEntry) error {
			if own[name] == nil && legacy[name] == nil {
				m := new(DayMeans)
				if err := e.means(m); err != nil {
					return fmt.Errorf("tenant %s: %w", name, err)
				}
				got[name] = m
				return nil
			}
			day := &Day{Date: d}
			if err := e.day(day); err != nil {
				return fmt.Errorf("tenant %s: %w", name, err)
			}
			gotFull[name] = day
			return nil
		})
		if err != nil {
			broken = append(broken, &CorruptError{Key: p.Key, Err: err})
			continue
		}
		maps.Copy(means, got)
		maps.Copy(full, gotFull)
	}
	for t, day := range own {
		overlayInto(full, t, day)
	}
	for t, day := range legacy {
		if base := full[t]; base != nil {
			base.merge(day)
		} else {
			full[t] = day
		}
	}
	out := &cachedDay{stamp: stamp, tenants: make(map[string]*DayMeans, len(means)+len(full)), corrupt: corrupt, broken: broken}
	// one allocation for the day's means: 1,440 bytes each would otherwise
	// take 1,536-byte allocations, one object per tenant day
	slab := make([]DayMeans, len(means)+len(full))
	i := 0
	for t, m := range means {
		slab[i] = *m
		out.tenants[t] = &slab[i]
		i++
	}
	for t, day := range full {
		day.meansInto(&slab[i])
		out.tenants[t] = &slab[i]
		i++
	}
	return out, len(pairs), bytes, nil
}

// refreshTenants re-reads the tenant infos when any changed.
func (c *Cache) refreshTenants(ctx context.Context, l Lister) error {
	ks, stamp, err := l.Keys(ctx, c.store.keys.tenants(), "/")
	if err != nil {
		return fmt.Errorf("history: list tenants: %w", err)
	}
	if len(ks) == 0 {
		stamp = 0
	}
	if c.tenants != nil && stamp == c.tenantStamp {
		return nil
	}
	infos, err := c.store.Tenants(ctx)
	if err != nil {
		return err
	}
	c.tenants, c.tenantStamp = infos, stamp
	return nil
}

// refreshLegacy re-reads format-2 days in [from, to] when anything under
// cpu/ changed, and says whether it did.
func (c *Cache) refreshLegacy(ctx context.Context, l Lister, from, to Date) (bool, error) {
	dirs, stamp, err := l.Keys(ctx, c.store.keys.legacyRoot(), "/")
	if err != nil {
		return false, fmt.Errorf("history: list %s: %w", c.store.keys.legacyRoot(), err)
	}
	if len(dirs) == 0 {
		stamp = 0 // Consul gives an empty prefix the whole store's index
	}
	if stamp == c.legacyStamp && c.legacy != nil {
		return false, nil
	}
	legacy := map[Date]map[string]*Day{}
	bad := map[string]error{}
	if len(dirs) > 0 {
		for _, t := range c.tenants {
			days, err := c.store.legacyDays(ctx, t.ID(), from, to)
			var corrupt *CorruptError
			if errors.As(err, &corrupt) {
				bad[t.ID().String()] = err
				continue
			}
			if err != nil {
				return false, err
			}
			for d, day := range days {
				if legacy[d] == nil {
					legacy[d] = map[string]*Day{}
				}
				legacy[d][t.ID().String()] = day
			}
		}
	}
	changed := len(c.legacy) > 0 || len(legacy) > 0
	c.legacy, c.legacyBad, c.legacyStamp = legacy, bad, stamp
	return changed, nil
}

// Corrupt returns, per tenant, an own value of a cached day that does not
// decode (a *CorruptError naming its key).
func (c *Cache) Corrupt() map[string]error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.legacyBad)
	if out == nil {
		out = map[string]error{}
	}
	for _, day := range c.days {
		maps.Copy(out, day.corrupt)
	}
	return out
}

// BrokenBundles returns the cached days' bundles that do not decode; their
// tenants read those days as gaps until the bundle is rewritten.
func (c *Cache) BrokenBundles() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []error
	for _, day := range c.days {
		out = append(out, day.broken...)
	}
	return out
}

// Tenants returns the tenant infos as of the last Refresh.
func (c *Cache) Tenants() []TenantInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tenants
}

// Series writes the tenant's slots over the whole days covering [from, to)
// into buf (grown when short) and returns them, as Store.Series would read
// them.
func (c *Cache) Series(tenant string, from, to time.Time, buf []float64) Series {
	first, last := DateOf(from), DateOf(to.Add(-time.Nanosecond))
	n := int(last-first+1) * SlotsPerDay
	if cap(buf) < n {
		buf = make([]float64, n)
	}
	buf = buf[:n]
	c.mu.Lock()
	defer c.mu.Unlock()
	for d := first; d <= last; d++ {
		out := buf[int(d-first)*SlotsPerDay:][:SlotsPerDay]
		var m *DayMeans
		if day := c.days[d]; day != nil {
			m = day.tenants[tenant]
		}
		for i := range out {
			if m == nil || m[i] == Gap {
				out[i] = math.NaN()
			} else {
				out[i] = float64(m[i]) / 100
			}
		}
	}
	return Series{Start: first.Time(), Values: buf}
}

// daysOf lists the day directories under days/ (for pruning).
func (s *Store) daysOf(ctx context.Context, l Lister) ([]Date, error) {
	dirs, _, err := l.Keys(ctx, s.keys.daysRoot(), "/")
	if err != nil {
		return nil, err
	}
	var out []Date
	for _, dir := range dirs {
		name := strings.TrimSuffix(strings.TrimPrefix(dir, s.keys.daysRoot()), "/")
		d, err := ParseDate(name)
		if err != nil {
			return nil, &CorruptError{Key: dir, Err: fmt.Errorf("%q is not a day", name)}
		}
		out = append(out, d)
	}
	return out, nil
}

// PruneDays deletes every tenant's format-3 days before keepFrom, one
// delete-tree per day, and returns how many days went.
func (s *Store) PruneDays(ctx context.Context, keepFrom Date) (int, error) {
	l, ok := s.kv.(Lister)
	if !ok {
		return 0, nil
	}
	days, err := s.daysOf(ctx, l)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range days {
		if d < keepFrom {
			if err := l.DeleteTree(ctx, s.keys.dayDir(d)); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// PruneLegacy deletes every tenant's format-2 values before keepFrom; it
// costs one keys list when there are none.
func (s *Store) PruneLegacy(ctx context.Context, keepFrom Date) (int, error) {
	l, ok := s.kv.(Lister)
	if !ok {
		return 0, nil
	}
	keys, _, err := l.Keys(ctx, s.keys.legacyRoot(), "")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		i := strings.LastIndexByte(k, '/')
		if d, err := ParseDate(k[i+1:]); err == nil && d < keepFrom {
			if err := s.kv.Delete(ctx, k); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
