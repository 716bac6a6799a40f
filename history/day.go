package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"
)

// Slot is the sampling interval of tenant history, as in the paper's
// datacenters ("records the CPU utilization every two minutes").
const (
	Slot        = 2 * time.Minute
	SlotsPerDay = int(24 * time.Hour / Slot)
)

// Date is a UTC day, counted from 1970-01-01.
type Date int32

// DateOf returns the UTC day of t.
func DateOf(t time.Time) Date { return Date(t.UTC().Unix() / 86400) }

// Time returns midnight UTC of the day.
func (d Date) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

func (d Date) String() string { return d.Time().Format(time.DateOnly) }

// ParseDate parses YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, err
	}
	return DateOf(t), nil
}

// SlotOf returns the slot of t within its day.
func SlotOf(t time.Time) int {
	return int(t.UTC().Sub(DateOf(t).Time()) / Slot)
}

// Day is one day of a tenant's average-server CPU utilisation: per slot,
// the sum of the samples it received, in hundredths of a percent, and how
// many there were. A slot with Count 0 is a gap. Keeping the sum as an
// integer makes appends exact: folding thousands of nodes' samples into one
// slot, one check-and-set at a time, cannot drift (a mean rounded at every
// append drifted by ~0.1 point in tests); each sample is rounded once, to
// 0.01 point.
type Day struct {
	Date  Date
	Sum   [SlotsPerDay]uint32
	Count [SlotsPerDay]uint16
}

// maxSum is the largest slot sum: every sample at 100%.
const maxSum = math.MaxUint16 * 10000

// hundredths rounds a percent to hundredths, clamped to 0-100.
func hundredths(cpu float64) uint32 { return uint32(math.Round(clampPercent(cpu) * 100)) }

// Add folds one sample into a slot.
func (d *Day) Add(slot int, cpu float64) {
	if d.Count[slot] == math.MaxUint16 {
		return // 65,535 samples in 2 minutes: the mean cannot move any more
	}
	d.Sum[slot] += hundredths(cpu)
	d.Count[slot]++
}

// Set replaces a slot with one value (imports of an already averaged series).
func (d *Day) Set(slot int, cpu float64) { d.Sum[slot], d.Count[slot] = hundredths(cpu), 1 }

// Mean is slot i's mean in percent, to 0.01 point as history keeps it
// (NaN for a gap).
func (d *Day) Mean(i int) float64 {
	if d.Count[i] == 0 {
		return math.NaN()
	}
	n := d.Count[i]
	return float64((d.Sum[i]+uint32(n)/2)/uint32(n)) / 100
}

// merge folds o's samples into d, slot by slot (one day written under two
// keys during a format change).
func (d *Day) merge(o *Day) {
	for i := range d.Sum {
		if n := uint32(d.Count[i]) + uint32(o.Count[i]); n <= math.MaxUint16 {
			d.Sum[i] += o.Sum[i]
			d.Count[i] = uint16(n)
		}
	}
}

// Format 2, "HVD2": magic, date, then per slot the mean (float32, percent)
// and the count (uint16), little endian, then a CRC-32 of all that precedes
// it: 4,332 bytes. Read forever; written only while the history format
// marker says 2 (see Formats), so that readers of the previous release keep
// reading what this one writes during an upgrade.
var dayMagic2 = [4]byte{'H', 'V', 'D', '2'}

const slotLen2 = 6

const dayEncodedLen2 = 4 + 4 + SlotsPerDay*slotLen2 + 4

// marshalV2 encodes the day in format 2.
func (d *Day) marshalV2() []byte {
	b := make([]byte, dayEncodedLen2)
	copy(b, dayMagic2[:])
	binary.LittleEndian.PutUint32(b[4:], uint32(d.Date))
	for i := 0; i < SlotsPerDay; i++ {
		off := 8 + slotLen2*i
		mean := float32(0)
		if d.Count[i] > 0 { // exact, not Mean's hundredths: appends must not drift
			mean = float32(clampPercent(float64(d.Sum[i]) / 100 / float64(d.Count[i])))
		}
		binary.LittleEndian.PutUint32(b[off:], math.Float32bits(mean))
		binary.LittleEndian.PutUint16(b[off+4:], d.Count[i])
	}
	binary.LittleEndian.PutUint32(b[dayEncodedLen2-4:], crc32.ChecksumIEEE(b[:dayEncodedLen2-4]))
	return b
}

// unmarshalV2 decodes format 2, refusing anything truncated, altered or out
// of range. A mean becomes a sum of hundredths: mean x count, rounded.
func (d *Day) unmarshalV2(b []byte) error {
	if len(b) != dayEncodedLen2 {
		return fmt.Errorf("%d bytes, want %d (truncated or not a day)", len(b), dayEncodedLen2)
	}
	if got, want := crc32.ChecksumIEEE(b[:dayEncodedLen2-4]), binary.LittleEndian.Uint32(b[dayEncodedLen2-4:]); got != want {
		return fmt.Errorf("checksum %08x, want %08x", got, want)
	}
	d.Date = Date(int32(binary.LittleEndian.Uint32(b[4:])))
	for i := 0; i < SlotsPerDay; i++ {
		off := 8 + slotLen2*i
		mean := math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
		if math.IsNaN(float64(mean)) || mean < 0 || mean > 100 {
			return fmt.Errorf("slot %d holds %v%%, outside 0-100", i, mean)
		}
		d.Count[i] = binary.LittleEndian.Uint16(b[off+4:])
		d.Sum[i] = uint32(math.Round(float64(mean) * 100 * float64(d.Count[i])))
	}
	return nil
}

// MarshalBinary encodes the day in the newest format (3, see daycodec.go).
func (d *Day) MarshalBinary() ([]byte, error) { return d.marshalV3(), nil }

// UnmarshalBinary decodes a day of any format this release reads (2 or 3),
// refusing anything truncated, altered or out of range.
func (d *Day) UnmarshalBinary(b []byte) error {
	if len(b) < 4 {
		return fmt.Errorf("%d bytes (truncated or not a day)", len(b))
	}
	*d = Day{}
	switch [4]byte(b[:4]) {
	case dayMagic2:
		return d.unmarshalV2(b)
	case dayMagic3:
		return d.unmarshalV3(b)
	}
	return errors.New("not a history day (bad magic)")
}

// EncodeDay encodes d in the given format (2 or 3).
func EncodeDay(d *Day, format int) []byte {
	if format == 2 {
		return d.marshalV2()
	}
	return d.marshalV3()
}

func clampPercent(v float64) float64 { return math.Max(0, math.Min(100, v)) }

// CorruptError says a stored value does not decode; it names the key.
type CorruptError struct {
	Key string
	Err error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("history: value at %q is corrupt: %v", e.Key, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }
