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
// the mean of the samples it received (percent) and how many there were.
// A slot with Count 0 is a gap.
type Day struct {
	Date  Date
	Mean  [SlotsPerDay]float32
	Count [SlotsPerDay]uint16
}

// Add folds one sample into a slot's running mean.
func (d *Day) Add(slot int, cpu float64) {
	n := float64(d.Count[slot])
	d.Mean[slot] = float32((float64(d.Mean[slot])*n + cpu) / (n + 1))
	if d.Count[slot] < math.MaxUint16 {
		d.Count[slot]++
	}
}

// Set replaces a slot with one value (imports of an already averaged series).
func (d *Day) Set(slot int, cpu float64) {
	d.Mean[slot], d.Count[slot] = float32(cpu), 1
}

// The encoding: magic, date, then per slot the mean (float32, percent) and
// the count (uint16), little endian, then a CRC-32 of all that precedes it.
// The mean is kept as a float so that folding thousands of nodes' samples
// into one slot, one check-and-set at a time, does not drift (a mean
// rounded to hundredths at every append drifted by ~0.1 point in tests).
var dayMagic = [4]byte{'H', 'V', 'D', '2'}

const slotLen = 6

const dayEncodedLen = 4 + 4 + SlotsPerDay*slotLen + 4

// MarshalBinary encodes the day.
func (d *Day) MarshalBinary() ([]byte, error) {
	b := make([]byte, dayEncodedLen)
	copy(b, dayMagic[:])
	binary.LittleEndian.PutUint32(b[4:], uint32(d.Date))
	for i := 0; i < SlotsPerDay; i++ {
		off := 8 + slotLen*i
		binary.LittleEndian.PutUint32(b[off:], math.Float32bits(float32(clampPercent(float64(d.Mean[i])))))
		binary.LittleEndian.PutUint16(b[off+4:], d.Count[i])
	}
	binary.LittleEndian.PutUint32(b[dayEncodedLen-4:], crc32.ChecksumIEEE(b[:dayEncodedLen-4]))
	return b, nil
}

// UnmarshalBinary decodes a day, refusing anything truncated, altered or
// out of range.
func (d *Day) UnmarshalBinary(b []byte) error {
	if len(b) != dayEncodedLen {
		return fmt.Errorf("%d bytes, want %d (truncated or not a day)", len(b), dayEncodedLen)
	}
	if [4]byte(b[:4]) != dayMagic {
		return errors.New("not a history day (bad magic)")
	}
	if got, want := crc32.ChecksumIEEE(b[:dayEncodedLen-4]), binary.LittleEndian.Uint32(b[dayEncodedLen-4:]); got != want {
		return fmt.Errorf("checksum %08x, want %08x", got, want)
	}
	d.Date = Date(int32(binary.LittleEndian.Uint32(b[4:])))
	for i := 0; i < SlotsPerDay; i++ {
		off := 8 + slotLen*i
		mean := math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
		if math.IsNaN(float64(mean)) || mean < 0 || mean > 100 {
			return fmt.Errorf("slot %d holds %v%%, outside 0-100", i, mean)
		}
		d.Mean[i] = mean
		d.Count[i] = binary.LittleEndian.Uint16(b[off+4:])
	}
	return nil
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
