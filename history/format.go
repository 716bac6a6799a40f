package history

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// FormatDocument is the name of the history format marker (JSON
// {"day_format": 2|3|4}) under Harvest's prefix. Absent means 2: the layout
// and values of the release before format 3, which its readers understand.
// Every release reads all the formats it knows; writers write what the
// marker says, so that an operator raises it (harvestctl history format
// -set 4) only once every driver, placer and blob front reads the new
// format, and a rolling upgrade never shows an old reader a value it cannot
// decode.
//
//	format 2: cpu/<env>/<function>/<YYYY-MM-DD>, "HVD2" values (4,332 bytes)
//	format 3: days/<YYYY-MM-DD>/t/<env>/<function>, "HVD3" values (delta +
//	          varint + zstd), and sealed days bundled by the placer at
//	          days/<YYYY-MM-DD>/b/<i>-of-<n> (many tenants per value, "HVB3")
//	format 4: as 3, but sealed days' bundles ("HVB4") keep each slot's mean
//	          to 0.1 point instead of the drivers' sums (bundle.go)
const FormatDocument = "history-format"

// Formats are the day formats this release reads; the last is the newest.
var Formats = []int{2, 3, 4}

// LatestFormat is the newest day format.
const LatestFormat = 4

type formatDoc struct {
	DayFormat int `json:"day_format"`
}

// formatTTL is how long a store trusts the marker it read: a raised marker
// reaches every writer within it.
const formatTTL = 5 * time.Minute

type formatCache struct {
	mu    sync.Mutex
	value int
	read  time.Time
}

// Format returns the day format writers use now (2 when no marker is set).
func (s *Store) Format(ctx context.Context) (int, error) {
	s.format.mu.Lock()
	defer s.format.mu.Unlock()
	if s.format.value != 0 && time.Since(s.format.read) < formatTTL {
		return s.format.value, nil
	}
	var doc formatDoc
	ok, err := s.GetDocument(ctx, FormatDocument, &doc)
	if err != nil {
		return 0, err
	}
	f := 2
	if ok {
		if !slices.Contains(Formats, doc.DayFormat) {
			return 0, &CorruptError{Key: s.DocumentKey(FormatDocument), Err: fmt.Errorf("day_format %d is not one of %v", doc.DayFormat, Formats)}
		}
		f = doc.DayFormat
	}
	s.format.value, s.format.read = f, time.Now()
	return f, nil
}

// SetFormat sets the marker. Lowering it is allowed (a rollback): newer
// days stay readable by this release and are no longer written.
func (s *Store) SetFormat(ctx context.Context, f int) error {
	if !slices.Contains(Formats, f) {
		return fmt.Errorf("history: day format %d: want one of %v", f, Formats)
	}
	if err := s.PutDocument(ctx, FormatDocument, formatDoc{DayFormat: f}); err != nil {
		return err
	}
	s.format.mu.Lock()
	s.format.value, s.format.read = f, time.Now()
	s.format.mu.Unlock()
	return nil
}

// InitFormat sets the marker to the newest format when none is set and no
// format-2 history exists (a new installation: nothing older can be
// reading it), and returns the format in force.
func (s *Store) InitFormat(ctx context.Context) (int, error) {
	var doc formatDoc
	ok, err := s.GetDocument(ctx, FormatDocument, &doc)
	if err != nil || ok {
		s.format.mu.Lock()
		s.format.value = 0 // read it again
		s.format.mu.Unlock()
		if err != nil {
			return 0, err
		}
		return s.Format(ctx)
	}
	legacy, err := s.kv.List(ctx, s.keys.legacyRoot())
	if err != nil {
		return 0, err
	}
	if len(legacy) > 0 {
		return s.Format(ctx)
	}
	// create only if still absent: two starters agree
	data, _ := json.Marshal(formatDoc{DayFormat: LatestFormat})
	if _, err := s.kv.CAS(ctx, s.DocumentKey(FormatDocument), data, 0); err != nil {
		return 0, err
	}
	s.format.mu.Lock()
	s.format.value = 0
	s.format.mu.Unlock()
	return s.Format(ctx)
}

// Format-3 keys.
func (k keys) legacyRoot() string                  { return k.prefix + "cpu/" }
func (k keys) daysRoot() string                    { return k.prefix + "days/" }
func (k keys) dayDir(d Date) string                { return k.daysRoot() + d.String() + "/" }
func (k keys) tenantDay(t TenantID, d Date) string { return k.dayDir(d) + "t/" + t.String() }
func (k keys) bundleDir(d Date) string             { return k.dayDir(d) + "b/" }
func (k keys) bundle(d Date, i, n int) string      { return fmt.Sprintf("%s%d-of-%d", k.bundleDir(d), i, n) }

// parseDayKey splits a key under days/<date>/ into its kind: a tenant's
// day ("t") or a bundle ("b", with i and n).
func (k keys) parseDayKey(key string) (d Date, kind string, t TenantID, i, n int, err error) {
	rest, ok := strings.CutPrefix(key, k.daysRoot())
	if !ok {
		return 0, "", t, 0, 0, fmt.Errorf("not under %s", k.daysRoot())
	}
	date, rest, _ := strings.Cut(rest, "/")
	if d, err = ParseDate(date); err != nil {
		return 0, "", t, 0, 0, fmt.Errorf("%q is not a day", date)
	}
	kind, rest, _ = strings.Cut(rest, "/")
	switch kind {
	case "t":
		t, err = ParseTenantID(rest)
	case "b":
		if _, err = fmt.Sscanf(rest, "%d-of-%d", &i, &n); err == nil && (n < 1 || i < 0 || i >= n || fmt.Sprintf("%d-of-%d", i, n) != rest) {
			err = fmt.Errorf("bundle %q out of range", rest)
		}
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	return d, kind, t, i, n, err
}
