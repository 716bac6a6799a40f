package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// A bundle holds one sealed day of many tenants in one value, so that a
// datacenter's 35 days are thousands of keys, not hundreds of thousands
// (Consul keeps ~1 KB of bookkeeping per key in memory beside the value).
// The placer seals a day once no driver writes it any more (Seal). Layout:
// "HVB3", date (int32), zstd of the payload, CRC-32 of all that precedes
// it; the payload is a uvarint count, then per tenant (sorted) a uvarint
// length and the tenant's name, a uvarint length and its format-3 day
// payload (daycodec.go).
//
// Format 4 writes "HVB4": the same, with a uint16 resolution after the
// date (in hundredths of a point: 10 keeps each slot's mean to 0.1 point),
// and each tenant's payload holds its slot means in that unit, one sample
// a slot. A sealed day is only read, never appended to, so its sums and
// counts are no longer needed; and the last digit of noisy 2-minute means
// is what most of a value's bytes were (docs/history.md measures both).
var (
	bundleMagic  = [4]byte{'H', 'V', 'B', '3'}
	bundleMagic4 = [4]byte{'H', 'V', 'B', '4'}
)

// sealedResolution4 is format 4's bundle resolution, in hundredths of a
// point: slot means kept to 0.1 point (1/62 of a core on a 16-core server).
const sealedResolution4 = 10

const (
	// bundleTenants is how many tenants a bundle aims at: ~65 KB of
	// synthetic history, well under Consul's 512 KiB value limit.
	bundleTenants = 64
	maxBundle     = 4 << 20 // decoded payload bound
)

var bdec, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxBundle), zstd.WithDecoderConcurrency(2),
	zstd.WithDecoderLowmem(true))

// bundleCount is how many bundles a day of n tenants is sealed into.
func bundleCount(n int) int { return max(1, (n+bundleTenants-1)/bundleTenants) }

// bundleOf is the bundle of n that holds tenant t.
func bundleOf(t string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(t))
	return int(h.Sum32() % uint32(n))
}

// encodeBundle encodes days (tenant -> day) of date d: format 3 ("HVB3",
// sums and counts as drivers sent them) when step is 1, else format 4
// ("HVB4", slot means in units of step hundredths).
func encodeBundle(d Date, days map[string]*Day, step uint16) []byte {
	names := make([]string, 0, len(days))
	for t := range days {
		names = append(names, t)
	}
	sort.Strings(names)
	p := binary.AppendUvarint(nil, uint64(len(names)))
	var scratch []byte
	var means Day
	for _, t := range names {
		day := days[t]
		if step > 1 {
			day = day.quantised(step, &means)
		}
		scratch = appendPayload(scratch[:0], day)
		p = binary.AppendUvarint(p, uint64(len(t)))
		p = append(p, t...)
		p = binary.AppendUvarint(p, uint64(len(scratch)))
		p = append(p, scratch...)
	}
	b := make([]byte, 8, 10+len(p)/2)
	copy(b, bundleMagic[:])
	if step > 1 {
		copy(b, bundleMagic4[:])
		b = binary.LittleEndian.AppendUint16(b, step)
	}
	binary.LittleEndian.PutUint32(b[4:], uint32(d))
	b = zenc.EncodeAll(p, b)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// quantised sets out to d's slot means in units of step hundredths
// (rounded half up), one sample a slot, and returns it.
func (d *Day) quantised(step uint16, out *Day) *Day {
	out.Date = d.Date
	for i := range d.Count {
		out.Sum[i], out.Count[i] = 0, 0
		if n := uint32(d.Count[i]); n > 0 {
			mean := (d.Sum[i] + n/2) / n
			out.Sum[i], out.Count[i] = (mean+uint32(step)/2)/uint32(step), 1
		}
	}
	return out
}

// bundleEntry is one tenant's day in a bundle: its payload (valid only
// during decodeBundle's call) in units of step hundredths.
type bundleEntry struct {
	payload []byte
	step    uint32
}

// day decodes the entry into d (Date untouched).
func (e bundleEntry) day(d *Day) error {
	if err := decodePayload(e.payload, d); err != nil {
		return err
	}
	if e.step == 1 {
		return nil
	}
	for i, n := range d.Count {
		if n > 1 {
			return fmt.Errorf("slot %d holds %d samples in a bundle of means", i, n)
		}
		if d.Sum[i] *= e.step; d.Sum[i] > 10000 {
			return fmt.Errorf("slot %d averages outside 0-100%%", i)
		}
	}
	return nil
}

// means decodes the entry straight into slot means.
func (e bundleEntry) means(m *DayMeans) error {
	var d Day
	if err := e.day(&d); err != nil {
		return err
	}
	d.meansInto(m)
	return nil
}

// decodeBundle checks a bundle (format 3 or 4) of date want and calls fn
// with each tenant's entry.
func decodeBundle(b []byte, want Date, fn func(tenant string, e bundleEntry) error) error {
	if len(b) < 12 || ([4]byte(b[:4]) != bundleMagic && [4]byte(b[:4]) != bundleMagic4) {
		return errors.New("not a history bundle (bad magic or truncated)")
	}
	body, header, step := b[:len(b)-4], 8, uint32(1)
	if got, w := crc32.ChecksumIEEE(body), binary.LittleEndian.Uint32(b[len(b)-4:]); got != w {
		return fmt.Errorf("checksum %08x, want %08x", got, w)
	}
	if d := Date(int32(binary.LittleEndian.Uint32(b[4:]))); d != want {
		return fmt.Errorf("holds day %s", d)
	}
	if [4]byte(b[:4]) == bundleMagic4 {
		if len(body) < 10 {
			return errors.New("format-4 bundle truncated")
		}
		header, step = 10, uint32(binary.LittleEndian.Uint16(b[8:]))
		if step == 0 || step > 10000 {
			return fmt.Errorf("resolution of %d hundredths", step)
		}
	}
	p, err := bdec.DecodeAll(body[header:], nil)
	if err != nil {
		return fmt.Errorf("decompress: %w", err)
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return errors.New("tenant count truncated or too large")
	}
	p = p[k:]
	next := func(what string) ([]byte, error) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, fmt.Errorf("%s truncated", what)
		}
		v := p[k : k+int(l)]
		p = p[k+int(l):]
		return v, nil
	}
	for i := uint64(0); i < n; i++ {
		name, err := next("tenant name")
		if err != nil {
			return err
		}
		payload, err := next("day of " + string(name))
		if err != nil {
			return err
		}
		if err := fn(string(name), bundleEntry{payload: payload, step: step}); err != nil {
			return err
		}
	}
	if len(p) != 0 {
		return fmt.Errorf("%d bytes after the last tenant", len(p))
	}
	return nil
}

// DayMeans is one day of one tenant as the placer keeps it in memory: each
// slot's mean in hundredths of a percent, Gap where no sample exists
// (1,440 bytes, against 4,332 for a Day).
type DayMeans [SlotsPerDay]uint16

// Gap marks a slot without samples in DayMeans.
const Gap = math.MaxUint16

// Means returns the day's slot means.
func (d *Day) Means() *DayMeans {
	var m DayMeans
	d.meansInto(&m)
	return &m
}

func (d *Day) meansInto(m *DayMeans) {
	for i := range m {
		if d.Count[i] == 0 {
			m[i] = Gap
		} else {
			n := uint32(d.Count[i])
			m[i] = uint16((d.Sum[i] + n/2) / n)
		}
	}
}

// overlay sets o's sampled slots over d's (a tenant's own key written
// after its day was sealed: an import replaced them, or samples came late).
func (d *Day) overlay(o *Day) {
	for i := range d.Count {
		if o.Count[i] > 0 {
			d.Sum[i], d.Count[i] = o.Sum[i], o.Count[i]
		}
	}
}
