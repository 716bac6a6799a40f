package csvfmt

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
)

// LineError is a parse error at a line of the input.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseTime accepts RFC 3339 or Unix seconds.
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(secs, 0).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("timestamp %q is neither RFC 3339 nor Unix seconds", s)
}

// ClampAbove is how far above 100 a cpu_percent may be and still be read
// as 100: monitoring exporters report a little over 100 when counters are
// sampled a moment apart (103.2 seen in a real export).
const ClampAbove = 110.0

// ParsePercent parses a CPU utilisation and refuses what one cannot be;
// values up to ClampAbove come back as 100 with clamped true.
func ParsePercent(s string) (v float64, clamped bool, err error) {
	v, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("cpu_percent %q is not a number", s)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, false, fmt.Errorf("cpu_percent is %s", s)
	case v < 0:
		return 0, false, fmt.Errorf("cpu_percent %v is negative", v)
	case v > ClampAbove:
		return 0, false, fmt.Errorf("cpu_percent %v is above 100 (up to %g is read as 100)", v, ClampAbove)
	case v > 100:
		return 100, true, nil
	}
	return v, false, nil
}

func newReader(r io.Reader) (*csv.Reader, error) {
	r, err := Decompress(r)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1 // checked per row, with a clearer message
	return cr, nil
}

func expectHeader(cr *csv.Reader, want ...string) error {
	rec, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return &LineError{1, errors.New("empty input: want a header " + strings.Join(want, ","))}
		}
		return &LineError{1, err}
	}
	if len(rec) != len(want) {
		return &LineError{1, fmt.Errorf("header has %d columns, want %s", len(rec), strings.Join(want, ","))}
	}
	for i := range want {
		if strings.TrimSpace(strings.TrimPrefix(rec[i], "\ufeff")) != want[i] {
			return &LineError{1, fmt.Errorf("header column %d is %q, want %q", i+1, rec[i], want[i])}
		}
	}
	return nil
}

// LongOptions say how ParseLong treats a real export.
type LongOptions struct {
	// Strict stops at the first bad row; otherwise bad rows are skipped
	// and reported, and the rest is read.
	Strict bool
	// MaxFill bounds how far a sample fills the slots after it (default
	// 15 minutes); see ParseLong.
	MaxFill time.Duration
}

// LongReport says what ParseLong read and what it did not.
type LongReport struct {
	Rows    int          // rows read into a series
	Clamped int          // cpu_percent a little above 100, read as 100
	Filled  int          // slots with no sample of their own, filled by the sample before them
	Bad     int          // rows skipped
	Errors  []*LineError // the first MaxReportedErrors of them, with their lines
}

// MaxSpan is the longest a tenant's history may span in one file.
const MaxSpan = 400 * 24 * time.Hour

// MaxReportedErrors is how many bad rows a LongReport keeps.
const MaxReportedErrors = 20

// String sums the report up in a line.
func (r LongReport) String() string {
	out := fmt.Sprintf("%d rows read, %d clamped to 100%%, %d slots filled from the sample before them, %d bad rows skipped", r.Rows, r.Clamped, r.Filled, r.Bad)
	for _, e := range r.Errors {
		out += "\n  " + e.Error()
	}
	if r.Bad > len(r.Errors) {
		out += fmt.Sprintf("\n  ... and %d more", r.Bad-len(r.Errors))
	}
	return out
}

// ParseLong reads the long format into one series per tenant. Samples in
// one 2-minute slot are averaged; a sample also fills the empty slots it
// covers, from its time up to the next sample but no further than the
// tenant's usual spacing (the median gap between its samples) nor
// MaxFill: a 5-minute export fills every slot, while a sample missing from
// a 2-minute export stays a gap. Header errors always fail; a bad row fails
// only with Strict.
func ParseLong(r io.Reader, opt LongOptions) (map[history.TenantID]history.Series, LongReport, error) {
	var rep LongReport
	if opt.MaxFill == 0 {
		opt.MaxFill = 15 * time.Minute
	}
	cr, err := newReader(r)
	if err != nil {
		return nil, rep, err
	}
	if err := expectHeader(cr, "tenant", "timestamp", "cpu_percent"); err != nil {
		return nil, rep, err
	}
	all := map[history.TenantID][]sample{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var id history.TenantID
		var smp sample
		var clamped bool
		if err == nil {
			id, smp, clamped, err = longRow(rec)
		}
		if err != nil {
			le := &LineError{line, err}
			if opt.Strict || !rowError(err) {
				return nil, rep, le
			}
			rep.Bad++
			if len(rep.Errors) < MaxReportedErrors {
				rep.Errors = append(rep.Errors, le)
			}
			continue
		}
		rep.Rows++
		if clamped {
			rep.Clamped++
		}
		all[id] = append(all[id], smp)
	}
	out := make(map[history.TenantID]history.Series, len(all))
	for id, samples := range all {
		lo, hi := samples[0].at, samples[0].at
		for _, x := range samples {
			lo, hi = min(lo, x.at), max(hi, x.at)
		}
		if span := time.Duration(hi-lo) * time.Second; hi-lo > int64(MaxSpan/time.Second) {
			return nil, rep, fmt.Errorf("tenant %s: samples span %.0f days, more than %.0f (a timestamp in the wrong unit?)",
				id, span.Hours()/24, MaxSpan.Hours()/24)
		}
		s, filled := toSlots(samples, opt.MaxFill)
		out[id] = s
		rep.Filled += filled
	}
	return out, rep, nil
}

// rowError reports whether err spoils one row only; a broken CSV quote
// does not (the reader cannot tell where the next row starts).
func rowError(err error) bool {
	var pe *csv.ParseError
	return !errors.As(err, &pe) || errors.Is(pe.Err, csv.ErrFieldCount)
}

type sample struct {
	at int64 // Unix seconds
	v  float64
}

func longRow(rec []string) (history.TenantID, sample, bool, error) {
	if len(rec) != 3 {
		return history.TenantID{}, sample{}, false, fmt.Errorf("%d fields, want 3 (tenant,timestamp,cpu_percent)", len(rec))
	}
	id, err := history.ParseTenantID(rec[0])
	if err != nil {
		return id, sample{}, false, err
	}
	ts, err := ParseTime(rec[1])
	if err != nil {
		return id, sample{}, false, err
	}
	v, clamped, err := ParsePercent(rec[2])
	if err != nil {
		return id, sample{}, false, err
	}
	return id, sample{ts.Unix(), v}, clamped, nil
}

// toSlots averages samples into 2-minute slots and fills the empty slots
// each sample covers (see ParseLong); it returns the series and how many
// slots it filled.
func toSlots(samples []sample, maxFill time.Duration) (history.Series, int) {
	sort.Slice(samples, func(i, j int) bool { return samples[i].at < samples[j].at })
	slot := int64(history.Slot / time.Second)
	first, last := floorDiv(samples[0].at, slot), floorDiv(samples[len(samples)-1].at, slot)
	sum, count := make([]float64, last-first+1), make([]int, last-first+1)
	for _, x := range samples {
		k := floorDiv(x.at, slot) - first
		sum[k] += x.v
		count[k]++
	}
	s := history.Series{Start: time.Unix(first*slot, 0).UTC(), Values: make([]float64, len(sum))}
	for k := range s.Values {
		s.Values[k] = math.NaN()
		if count[k] > 0 {
			s.Values[k] = sum[k] / float64(count[k])
		}
	}
	reach := min(usualSpacing(samples), int64(maxFill/time.Second))
	filled := 0
	for i, x := range samples {
		until := x.at + reach
		if i+1 < len(samples) {
			until = min(until, samples[i+1].at)
		}
		for k := floorDiv(x.at, slot) + 1; k*slot < until && k <= last; k++ {
			if count[k-first] == 0 && math.IsNaN(s.Values[k-first]) {
				s.Values[k-first] = x.v
				filled++
			}
		}
	}
	return s, filled
}

// usualSpacing is the median gap between consecutive samples, in seconds
// (0 with fewer than two).
func usualSpacing(samples []sample) int64 {
	var gaps []int64
	for i := 1; i < len(samples); i++ {
		if d := samples[i].at - samples[i-1].at; d > 0 {
			gaps = append(gaps, d)
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	return gaps[len(gaps)/2]
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// WriteLong writes series in the long format, one row per observed slot,
// tenants in name order.
func WriteLong(w io.Writer, series map[history.TenantID]history.Series) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"tenant", "timestamp", "cpu_percent"}); err != nil {
		return err
	}
	ids := make([]history.TenantID, 0, len(series))
	for id := range series {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		s := series[id]
		for i, v := range s.Values {
			if math.IsNaN(v) {
				continue
			}
			ts := s.Start.Add(time.Duration(i) * history.Slot).Format(time.RFC3339)
			if err := cw.Write([]string{id.String(), ts, strconv.FormatFloat(v, 'f', 2, 64)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
