package history

import (
	"math"
	"slices"
	"time"
)

// Series is a CPU utilisation series at 2-minute slots: Values[i] is the
// percent at Start + i*Slot, NaN where no sample exists.
type Series struct {
	Start  time.Time
	Values []float64
}

// End is the time just after the last slot.
func (s Series) End() time.Time { return s.Start.Add(time.Duration(len(s.Values)) * Slot) }

// Observed counts the slots that hold a sample.
func (s Series) Observed() int {
	n := 0
	for _, v := range s.Values {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// Last returns the trailing window of length d (or all of s if shorter).
func (s Series) Last(d time.Duration) Series {
	n := int(d / Slot)
	if n >= len(s.Values) {
		return s
	}
	skip := len(s.Values) - n
	return Series{Start: s.Start.Add(time.Duration(skip) * Slot), Values: s.Values[skip:]}
}

// seriesFromDays joins consecutive days into a series covering [from, to).
func seriesFromDays(days map[Date]*Day, from, to Date) Series {
	s := Series{Start: from.Time(), Values: make([]float64, 0, int(to-from)*SlotsPerDay)}
	for d := from; d < to; d++ {
		day := days[d]
		for i := 0; i < SlotsPerDay; i++ {
			if day == nil {
				s.Values = append(s.Values, math.NaN())
			} else {
				s.Values = append(s.Values, day.Mean(i))
			}
		}
	}
	return s
}

// splitDays cuts a slot-aligned series into days, setting each observed slot.
func splitDays(s Series) map[Date]*Day {
	days := map[Date]*Day{}
	start := s.Start.UTC().Truncate(Slot)
	for i, v := range s.Values {
		if math.IsNaN(v) {
			continue
		}
		t := start.Add(time.Duration(i) * Slot)
		d := DateOf(t)
		day := days[d]
		if day == nil {
			day = &Day{Date: d}
			days[d] = day
		}
		day.Set(SlotOf(t), v)
	}
	return days
}

// DaysOf cuts a slot-aligned series into whole days, oldest first, each
// observed slot set to its value (gaps stay gaps).
func DaysOf(s Series) []*Day {
	byDate := splitDays(s)
	out := make([]*Day, 0, len(byDate))
	for _, d := range byDate {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Day) int { return int(a.Date) - int(b.Date) })
	return out
}

// Until drops the slots at or after t (days read whole end in the future).
func (s Series) Until(t time.Time) Series {
	n := int(t.Sub(s.Start) / Slot)
	if n < 0 {
		n = 0
	}
	if n < len(s.Values) {
		s.Values = s.Values[:n]
	}
	return s
}

// TrimLeadingGaps drops the slots before the first sample: a tenant's
// history starts with its first sample.
func (s Series) TrimLeadingGaps() Series {
	for i, v := range s.Values {
		if !math.IsNaN(v) {
			return Series{Start: s.Start.Add(time.Duration(i) * Slot), Values: s.Values[i:]}
		}
	}
	return Series{Start: s.End()}
}
