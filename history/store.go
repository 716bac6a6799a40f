package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/contract"
)

// DefaultPrefix is where Harvest keeps its state in Consul KV.
const DefaultPrefix = contract.DefaultKVPrefix

// casAttempts bounds the retries of one check-and-set under contention.
const casAttempts = 50

// Store reads and writes tenant history in a KV.
type Store struct {
	kv     KV
	keys   keys
	format formatCache
	known  sync.Map // tenant + "\x00" + node already in its info: no read needed
}

// KeyPrefix is where Harvest's state lives in the KV: prefix ("" means
// DefaultPrefix) ending in a slash. Every store of Harvest state takes it.
func KeyPrefix(prefix string) string { return contract.KVPrefix(prefix) }

// NewStore returns a store under prefix (see KeyPrefix).
func NewStore(kv KV, prefix string) *Store {
	return &Store{kv: kv, keys: keys{prefix: KeyPrefix(prefix)}}
}

// Sample is one node's CPU utilisation (percent of the node) at a time.
type Sample struct {
	Node string
	Time time.Time
	CPU  float64
}

// update is Update on the store's KV.
func (s *Store) update(ctx context.Context, key string, fn func(old []byte, exists bool) ([]byte, error)) error {
	return Update(ctx, s.kv, key, fn)
}

// Update is a check-and-set loop on one key: read it, let fn compute the
// new value, write it only if nobody wrote in between, else back off and
// start over. Every read-modify-write of Harvest's state in Consul goes
// through it.
func Update(ctx context.Context, kv KV, key string, fn func(old []byte, exists bool) ([]byte, error)) error {
	for attempt := 0; attempt < casAttempts; attempt++ {
		old, index, err := kv.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("history: read %s: %w", key, err)
		}
		value, err := fn(old, index != 0)
		if err != nil {
			return err
		}
		if index != 0 && bytes.Equal(value, old) {
			return nil // nothing to change: no write
		}
		ok, err := kv.CAS(ctx, key, value, index)
		if err != nil {
			return fmt.Errorf("history: write %s: %w", key, err)
		}
		if ok {
			return nil
		}
		select { // another writer won: back off a little, with jitter
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.IntN(5*(attempt+1))) * time.Millisecond):
		}
	}
	return fmt.Errorf("history: %s: gave up after %d conflicting writes", key, casAttempts)
}

func (s *Store) updateDay(ctx context.Context, t TenantID, d Date, fn func(*Day)) error {
	format, err := s.Format(ctx)
	if err != nil {
		return err
	}
	key := s.keys.day(t, d)
	if format >= 3 {
		key = s.keys.tenantDay(t, d)
	}
	return s.update(ctx, key, func(old []byte, exists bool) ([]byte, error) {
		day := &Day{Date: d}
		if exists {
			if err := day.UnmarshalBinary(old); err != nil {
				return nil, &CorruptError{Key: key, Err: err}
			}
		}
		fn(day)
		return EncodeDay(day, format), nil
	})
}

// validateSample refuses what a utilisation cannot be.
func validateSample(x Sample) error {
	switch {
	case x.Node == "":
		return fmt.Errorf("sample at %s has no node", x.Time.Format(time.RFC3339))
	case math.IsNaN(x.CPU) || math.IsInf(x.CPU, 0):
		return fmt.Errorf("sample of %s at %s is %v, not a number", x.Node, x.Time.Format(time.RFC3339), x.CPU)
	case x.CPU < 0 || x.CPU > 100:
		return fmt.Errorf("sample of %s at %s is %.2f%%, outside 0-100", x.Node, x.Time.Format(time.RFC3339), x.CPU)
	case x.Time.IsZero():
		return fmt.Errorf("sample of %s has no time", x.Node)
	}
	return nil
}

// AppendSamples is the ingest API: it folds per-node samples into the
// tenant's average-server series (each slot keeps the mean of the samples it
// got) and records the nodes. Nothing is written if any sample is invalid.
func (s *Store) AppendSamples(ctx context.Context, t TenantID, samples []Sample) error {
	if err := t.Validate(); err != nil {
		return err
	}
	byDay := map[Date][]Sample{}
	var nodes []string
	for _, x := range samples {
		if err := validateSample(x); err != nil {
			return fmt.Errorf("history: tenant %s: %w", t, err)
		}
		d := DateOf(x.Time)
		byDay[d] = append(byDay[d], x)
		nodes = append(nodes, x.Node)
	}
	if err := s.EnsureTenant(ctx, t, nodes...); err != nil {
		return err
	}
	for d, xs := range byDay {
		if err := s.updateDay(ctx, t, d, func(day *Day) {
			for _, x := range xs {
				day.Add(SlotOf(x.Time), x.CPU)
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// PutSeries imports an already averaged series: each observed slot replaces
// what the day held. Gaps (NaN) leave slots as they are.
func (s *Store) PutSeries(ctx context.Context, t TenantID, series Series, nodes []string) error {
	if err := t.Validate(); err != nil {
		return err
	}
	for i, v := range series.Values {
		if !math.IsNaN(v) && (v < 0 || v > 100 || math.IsInf(v, 0)) {
			return fmt.Errorf("history: tenant %s: value %v at slot %d outside 0-100", t, v, i)
		}
	}
	if err := s.EnsureTenant(ctx, t, nodes...); err != nil {
		return err
	}
	for d, in := range splitDays(series) {
		if err := s.updateDay(ctx, t, d, func(day *Day) {
			for i := range in.Count {
				if in.Count[i] > 0 {
					day.Sum[i], day.Count[i] = in.Sum[i], in.Count[i]
				}
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// Series reads the tenant's series over the whole days covering [from, to),
// from both layouts (see FormatDocument).
func (s *Store) Series(ctx context.Context, t TenantID, from, to time.Time) (Series, error) {
	first, last := DateOf(from), DateOf(to.Add(-time.Nanosecond))
	days, err := s.legacyDays(ctx, t, first, last)
	if err != nil {
		return Series{}, err
	}
	for d := first; d <= last; d++ {
		day, err := s.readDay3(ctx, t, d)
		if err != nil {
			return Series{}, err
		}
		if day == nil {
			continue
		}
		if old := days[d]; old != nil {
			day.merge(old) // written before and after the marker was raised
		}
		days[d] = day
	}
	return seriesFromDays(days, first, last+1), nil
}

// legacyDays reads the tenant's format-2 days in [first, last].
func (s *Store) legacyDays(ctx context.Context, t TenantID, first, last Date) (map[Date]*Day, error) {
	dir := s.keys.cpuDir(t)
	pairs, err := s.kv.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("history: list %s: %w", dir, err)
	}
	days := map[Date]*Day{}
	for _, p := range pairs {
		d, err := ParseDate(strings.TrimPrefix(p.Key, dir))
		if err != nil {
			return nil, &CorruptError{Key: p.Key, Err: fmt.Errorf("key is not a day: %w", err)}
		}
		if d < first || d > last {
			continue
		}
		day := &Day{}
		if err := day.UnmarshalBinary(p.Value); err != nil {
			return nil, &CorruptError{Key: p.Key, Err: err}
		}
		if day.Date != d {
			return nil, &CorruptError{Key: p.Key, Err: fmt.Errorf("holds day %s", day.Date)}
		}
		days[d] = day
	}
	return days, nil
}

// readDay3 reads one tenant's format-3 day: its bundle entry, if the day
// is sealed, under its own key's slots. Nil when neither exists.
func (s *Store) readDay3(ctx context.Context, t TenantID, d Date) (*Day, error) {
	var day *Day
	if l, ok := s.kv.(Lister); ok {
		keys, _, err := l.Keys(ctx, s.keys.bundleDir(d), "")
		if err != nil {
			return nil, fmt.Errorf("history: list %s: %w", s.keys.bundleDir(d), err)
		}
		for _, k := range keys {
			_, _, _, i, n, err := s.keys.parseDayKey(k)
			if err != nil {
				return nil, &CorruptError{Key: k, Err: err}
			}
			if i != bundleOf(t.String(), n) {
				continue
			}
			v, index, err := s.kv.Get(ctx, k)
			if err != nil || index == 0 {
				return nil, err
			}
			err = decodeBundle(v, d, func(name string, e bundleEntry) error {
				if name != t.String() {
					return nil
				}
				day = &Day{Date: d}
				return e.day(day)
			})
			if err != nil {
				return nil, &CorruptError{Key: k, Err: err}
			}
		}
	}
	key := s.keys.tenantDay(t, d)
	v, index, err := s.kv.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("history: read %s: %w", key, err)
	}
	if index == 0 {
		return day, nil
	}
	own := &Day{}
	if err := own.UnmarshalBinary(v); err != nil {
		return nil, &CorruptError{Key: key, Err: err}
	}
	if own.Date != d {
		return nil, &CorruptError{Key: key, Err: fmt.Errorf("holds day %s", own.Date)}
	}
	if day == nil {
		return own, nil
	}
	day.overlay(own)
	return day, nil
}

// Prune deletes the tenant's format-2 days before keepFrom (PruneDays
// drops format-3 days, every tenant's at once).
func (s *Store) Prune(ctx context.Context, t TenantID, keepFrom Date) (int, error) {
	dir := s.keys.cpuDir(t)
	pairs, err := s.kv.List(ctx, dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pairs {
		if d, err := ParseDate(strings.TrimPrefix(p.Key, dir)); err == nil && d < keepFrom {
			if err := s.kv.Delete(ctx, p.Key); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// EnsureTenant creates the tenant's info or adds nodes to it.
func (s *Store) EnsureTenant(ctx context.Context, t TenantID, nodes ...string) error {
	if err := t.Validate(); err != nil {
		return err
	}
	var missing []string
	for _, n := range nodes {
		if _, ok := s.known.Load(t.String() + "\x00" + n); !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 && len(nodes) > 0 {
		return nil // this process saw them recorded: no read, no write
	}
	key := s.keys.info(t)
	err := s.update(ctx, key, func(old []byte, exists bool) ([]byte, error) {
		info := TenantInfo{Environment: t.Environment, Function: t.Function}
		if exists {
			if err := json.Unmarshal(old, &info); err != nil {
				return nil, &CorruptError{Key: key, Err: err}
			}
		}
		changed := !exists
		for _, n := range nodes {
			if !slices.Contains(info.Nodes, n) {
				info.Nodes = append(info.Nodes, n)
				changed = true
			}
		}
		if !changed {
			return old, nil // Update writes nothing for an unchanged value
		}
		slices.Sort(info.Nodes)
		return json.Marshal(info)
	})
	if err == nil {
		for _, n := range nodes {
			s.known.Store(t.String()+"\x00"+n, true)
		}
	}
	return err
}

// Tenants lists every tenant with history.
func (s *Store) Tenants(ctx context.Context) ([]TenantInfo, error) {
	pairs, err := s.kv.List(ctx, s.keys.tenants())
	if err != nil {
		return nil, fmt.Errorf("history: list tenants: %w", err)
	}
	out := make([]TenantInfo, 0, len(pairs))
	for _, p := range pairs {
		var info TenantInfo
		if err := json.Unmarshal(p.Value, &info); err != nil {
			return nil, &CorruptError{Key: p.Key, Err: err}
		}
		if err := info.ID().Validate(); err != nil || s.keys.info(info.ID()) != p.Key {
			return nil, &CorruptError{Key: p.Key, Err: fmt.Errorf("names tenant %q", info.ID())}
		}
		out = append(out, info)
	}
	return out, nil
}

// AddReimages records reimage events, skipping ones already recorded.
func (s *Store) AddReimages(ctx context.Context, t TenantID, events []Reimage) error {
	byMonth := map[string][]Reimage{}
	var nodes []string
	for _, r := range events {
		if r.Node == "" || r.Time.IsZero() {
			return fmt.Errorf("history: tenant %s: reimage event without node or time", t)
		}
		byMonth[monthOf(r.Time)] = append(byMonth[monthOf(r.Time)], r)
		nodes = append(nodes, r.Node)
	}
	if err := s.EnsureTenant(ctx, t, nodes...); err != nil {
		return err
	}
	for m, add := range byMonth {
		key := s.keys.month(t, m)
		if err := s.update(ctx, key, func(old []byte, exists bool) ([]byte, error) {
			var have []Reimage
			if exists {
				var err error
				if have, err = decodeReimages(key, old); err != nil {
					return nil, err
				}
			}
			return json.Marshal(mergeReimages(have, add))
		}); err != nil {
			return err
		}
	}
	return nil
}

// Reimages returns every recorded reimage of the tenant, in time order.
func (s *Store) Reimages(ctx context.Context, t TenantID) ([]Reimage, error) {
	pairs, err := s.kv.List(ctx, s.keys.reimDir(t))
	if err != nil {
		return nil, err
	}
	var out []Reimage
	for _, p := range pairs {
		rs, err := decodeReimages(p.Key, p.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return mergeReimages(nil, out), nil
}

// FlushOffset is where in every interval of length every a node sends its
// samples: a hash of its name, so a datacenter's nodes spread evenly over
// the interval (nodes of one tenant do not all write its day at once) and
// a restarted node keeps its place.
func FlushOffset(node string, every time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(node))
	return time.Duration(float64(h.Sum64()>>11) / (1 << 53) * float64(every))
}
