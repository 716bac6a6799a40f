package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/klauspost/compress/zstd"
)

// Format 3, "HVD3": magic, date (int32), codec (0 raw, 1 zstd), payload,
// then a CRC-32 of all that precedes it. The payload is
//
//	counts: (uvarint run length, uvarint count) pairs covering the 720 slots
//	sums:   per slot with samples, zigzag varint of sum - count x prev, where
//	        prev is the previous sampled slot's mean in hundredths (0 first);
//	        every varint's first byte, then every varint's other bytes
//
// so a steady tenant costs about a byte a slot before compression, and a
// day is ~10% of format 2's 4,332 bytes (measured: docs/history.md). Lossless for
// what a Day holds: sums are exact integers.
var dayMagic3 = [4]byte{'H', 'V', 'D', '3'}

const (
	codecRaw  = 0
	codecZstd = 1
	// maxPayload bounds a decoded payload: 720 run pairs of 2 + 3 bytes
	// and 720 sums of at most 5 bytes each fit.
	maxPayload = 8 << 10
	headerLen3 = 9
)

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression),
		zstd.WithEncoderCRC(false), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxPayload), zstd.WithDecoderConcurrency(2),
		zstd.WithDecoderLowmem(true))
)

// appendPayload appends d's format-3 payload (uncompressed) to dst.
func appendPayload(dst []byte, d *Day) []byte {
	for i := 0; i < SlotsPerDay; {
		j := i + 1
		for j < SlotsPerDay && d.Count[j] == d.Count[i] {
			j++
		}
		dst = binary.AppendUvarint(dst, uint64(j-i))
		dst = binary.AppendUvarint(dst, uint64(d.Count[i]))
		i = j
	}
	// The residuals' varints are split in two planes, every first byte
	// then every continuation byte: the second plane holds small numbers
	// that the compressor codes in a few bits (~20% smaller than the
	// varints in a row on synthetic history).
	var rest [4 * SlotsPerDay]byte
	more := rest[:0]
	prev := int64(0)
	for i := 0; i < SlotsPerDay; i++ {
		if n := int64(d.Count[i]); n > 0 {
			sum := int64(d.Sum[i])
			var v [binary.MaxVarintLen64]byte
			k := binary.PutVarint(v[:], sum-n*prev)
			dst = append(dst, v[0])
			more = append(more, v[1:k]...)
			prev = (sum + n/2) / n
		}
	}
	return append(dst, more...)
}

// nextResidual reads one residual whose first byte is first and whose
// continuation bytes come from *more.
func nextResidual(first byte, more *[]byte) (int64, bool) {
	var v [binary.MaxVarintLen64]byte
	v[0] = first
	k := 1
	for v[k-1]&0x80 != 0 {
		if k == len(v) || len(*more) == 0 {
			return 0, false
		}
		v[k] = (*more)[0]
		*more = (*more)[1:]
		k++
	}
	r, n := binary.Varint(v[:k])
	return r, n == k
}

// decodePayload reads a format-3 payload into d (Date untouched).
func decodePayload(p []byte, d *Day) error {
	slot := 0
	for slot < SlotsPerDay {
		run, k := binary.Uvarint(p)
		if k <= 0 {
			return fmt.Errorf("count run at slot %d is truncated", slot)
		}
		p = p[k:]
		n, k := binary.Uvarint(p)
		if k <= 0 {
			return fmt.Errorf("count at slot %d is truncated", slot)
		}
		p = p[k:]
		if run == 0 || run > uint64(SlotsPerDay-slot) || n > math.MaxUint16 {
			return fmt.Errorf("count run of %d x %d at slot %d does not fit the day", run, n, slot)
		}
		for end := slot + int(run); slot < end; slot++ {
			d.Count[slot] = uint16(n)
		}
	}
	observed := 0
	for _, n := range d.Count {
		if n > 0 {
			observed++
		}
	}
	if len(p) < observed {
		return fmt.Errorf("%d sums for %d sampled slots (truncated)", len(p), observed)
	}
	first, more := p[:observed], p[observed:]
	prev := int64(0)
	for i := 0; i < SlotsPerDay; i++ {
		n := int64(d.Count[i])
		if n == 0 {
			d.Sum[i] = 0
			continue
		}
		r, ok := nextResidual(first[0], &more)
		if !ok {
			return fmt.Errorf("sum of slot %d is truncated", i)
		}
		first = first[1:]
		sum := r + n*prev
		if r > maxSum || r < -maxSum || sum < 0 || sum > n*10000 {
			return fmt.Errorf("slot %d averages outside 0-100%%", i)
		}
		d.Sum[i] = uint32(sum)
		prev = (sum + n/2) / n
	}
	if len(more) != 0 {
		return fmt.Errorf("%d bytes after the last slot", len(more))
	}
	return nil
}

// marshalV3 encodes the day in format 3, compressed when that is smaller.
func (d *Day) marshalV3() []byte {
	var scratch [2048]byte
	payload := appendPayload(scratch[:0], d)
	b := make([]byte, headerLen3, headerLen3+len(payload)+4)
	copy(b, dayMagic3[:])
	binary.LittleEndian.PutUint32(b[4:], uint32(d.Date))
	if z := zenc.EncodeAll(payload, b[headerLen3:headerLen3]); len(z) < len(payload) {
		b[8] = codecZstd
		b = b[:headerLen3+len(z)]
		copy(b[headerLen3:], z) // EncodeAll may have grown a new array
	} else {
		b[8] = codecRaw
		b = append(b, payload...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// unmarshalV3 decodes format 3.
func (d *Day) unmarshalV3(b []byte) error {
	payload, err := payloadV3(b, nil)
	if err != nil {
		return err
	}
	d.Date = Date(int32(binary.LittleEndian.Uint32(b[4:])))
	return decodePayload(payload, d)
}

// payloadV3 checks a format-3 value and returns its payload, decompressed
// into buf when it was compressed.
func payloadV3(b, buf []byte) ([]byte, error) {
	if len(b) < headerLen3+4 {
		return nil, fmt.Errorf("%d bytes (truncated or not a day)", len(b))
	}
	body := b[:len(b)-4]
	if got, want := crc32.ChecksumIEEE(body), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return nil, fmt.Errorf("checksum %08x, want %08x", got, want)
	}
	switch body[8] {
	case codecRaw:
		return body[headerLen3:], nil
	case codecZstd:
		p, err := zdec.DecodeAll(body[headerLen3:], buf[:0])
		if err != nil {
			return nil, fmt.Errorf("decompress: %w", err)
		}
		if len(p) > maxPayload {
			return nil, errors.New("payload too large")
		}
		return p, nil
	}
	return nil, fmt.Errorf("unknown codec %d", body[8])
}
