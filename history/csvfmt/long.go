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

// ParsePercent parses a CPU utilisation and refuses what one cannot be.
func ParsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("cpu_percent %q is not a number", s)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("cpu_percent is %s", s)
	case v < 0:
		return 0, fmt.Errorf("cpu_percent %v is negative", v)
	case v > 100:
		return 0, fmt.Errorf("cpu_percent %v is above 100", v)
	}
	return v, nil
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

// ParseLong reads the long format into one series per tenant, each sample
// averaged into its 2-minute slot.
func ParseLong(r io.Reader) (map[history.TenantID]history.Series, error) {
	cr, err := newReader(r)
	if err != nil {
		return nil, err
	}
	if err := expectHeader(cr, "tenant", "timestamp", "cpu_percent"); err != nil {
		return nil, err
	}
	type acc struct {
		sum   map[int64]float64
		count map[int64]int
	}
	all := map[history.TenantID]*acc{}
	slot := int64(history.Slot / time.Second)
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &LineError{line, err}
		}
		if len(rec) != 3 {
			return nil, &LineError{line, fmt.Errorf("%d fields, want 3 (tenant,timestamp,cpu_percent)", len(rec))}
		}
		id, err := history.ParseTenantID(rec[0])
		if err != nil {
			return nil, &LineError{line, err}
		}
		ts, err := ParseTime(rec[1])
		if err != nil {
			return nil, &LineError{line, err}
		}
		v, err := ParsePercent(rec[2])
		if err != nil {
			return nil, &LineError{line, err}
		}
		a := all[id]
		if a == nil {
			a = &acc{sum: map[int64]float64{}, count: map[int64]int{}}
			all[id] = a
		}
		k := ts.Unix() / slot
		a.sum[k] += v
		a.count[k]++
	}
	out := make(map[history.TenantID]history.Series, len(all))
	for id, a := range all {
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		for k := range a.count {
			first, last = min(first, k), max(last, k)
		}
		s := history.Series{Start: time.Unix(first*slot, 0).UTC(), Values: make([]float64, last-first+1)}
		for i := range s.Values {
			s.Values[i] = math.NaN()
		}
		for k, n := range a.count {
			s.Values[k-first] = a.sum[k] / float64(n)
		}
		out[id] = s
	}
	return out, nil
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
