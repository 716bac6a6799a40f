// Package integrity owns the blob tier's end-to-end checksums: every object
// is recorded, when it is written, as a list of segments (one for a single
// PUT, one per part of a multipart upload), each cut into blocks with a
// CRC32C per block. A reader checks every block before it passes it on, so
// a bad replica is found at the first bad block and the read can go on from
// another replica at that offset; the scrubber and the repairer check whole
// replicas the same way. Pure: no network or disk I/O.
package integrity

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MinBlock is the smallest block; a segment has at most MaxBlocks blocks
// (bigger segments get bigger blocks, powers of two), which bounds both a
// catalogue entry's size and the memory a verified read holds.
const (
	MinBlock  = 1 << 20
	MaxBlocks = 4096
)

// BlockSizeFor is the block size of a segment of size bytes.
func BlockSizeFor(size int64) int64 {
	b := int64(MinBlock)
	for b*MaxBlocks < size {
		b <<= 1
	}
	return b
}

// Segment is a run of bytes with its block checksums: Size bytes in blocks
// of Block bytes (the last one shorter), CRC the base64 of each block's
// CRC32C, big-endian, 4 bytes a block.
type Segment struct {
	Size  int64  `json:"size"`
	Block int64  `json:"block"`
	CRC   string `json:"crc32c"`
}

// Layout is an object's segments in order.
type Layout []Segment

// Size is the bytes the layout covers.
func (l Layout) Size() int64 {
	var n int64
	for _, s := range l {
		n += s.Size
	}
	return n
}

// ErrCorrupt says a block's bytes do not match its checksum.
var ErrCorrupt = errors.New("integrity: block checksum mismatch")

// Validate checks a layout read from the catalogue: block sizes, block
// counts and checksum lengths agree with the sizes.
func (l Layout) Validate() error {
	for i, s := range l {
		if s.Size < 0 || s.Block < MinBlock || s.Block&(s.Block-1) != 0 {
			return fmt.Errorf("integrity: segment %d: size %d, block %d", i, s.Size, s.Block)
		}
		raw, err := base64.StdEncoding.DecodeString(s.CRC)
		if err != nil {
			return fmt.Errorf("integrity: segment %d: %w", i, err)
		}
		if want := 4 * blocks(s.Size, s.Block); int64(len(raw)) != want {
			return fmt.Errorf("integrity: segment %d of %d bytes in blocks of %d has %d checksum bytes, want %d",
				i, s.Size, s.Block, len(raw), want)
		}
	}
	return nil
}

func blocks(size, block int64) int64 { return (size + block - 1) / block }

// Block is one block of an object: Len bytes at Offset with checksum Sum.
type Block struct {
	Offset, Len int64
	Sum         uint32
}

// Blocks returns the blocks that hold bytes [start, start+length) of the
// object, in order. The layout must be valid.
func (l Layout) Blocks(start, length int64) []Block {
	var out []Block
	end := start + length
	var base int64
	for _, s := range l {
		raw, _ := base64.StdEncoding.DecodeString(s.CRC)
		for i := int64(0); i*s.Block < s.Size; i++ {
			off := base + i*s.Block
			n := min(s.Block, s.Size-i*s.Block)
			if off+n > start && off < end {
				out = append(out, Block{Offset: off, Len: n, Sum: binary.BigEndian.Uint32(raw[4*i:])})
			}
		}
		base += s.Size
		if base >= end {
			break
		}
	}
	return out
}

// Check says whether data is the block's bytes.
func (b Block) Check(data []byte) error {
	if int64(len(data)) != b.Len {
		return fmt.Errorf("%w: %d bytes at %d, want %d", ErrCorrupt, len(data), b.Offset, b.Len)
	}
	if crc32.Checksum(data, castagnoli) != b.Sum {
		return fmt.Errorf("%w: block at %d (%d bytes)", ErrCorrupt, b.Offset, b.Len)
	}
	return nil
}

// Hasher computes a segment's block checksums as its bytes are written.
type Hasher struct {
	block int64
	n     int64 // bytes in the current block
	size  int64
	crc   hash.Hash32
	sums  []byte
}

// NewHasher cuts what is written into blocks of block bytes.
func NewHasher(block int64) *Hasher {
	return &Hasher{block: block, crc: crc32.New(castagnoli)}
}

func (h *Hasher) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		take := min(int64(len(p)), h.block-h.n)
		h.crc.Write(p[:take])
		h.n += take
		h.size += take
		p = p[take:]
		if h.n == h.block {
			h.flush()
		}
	}
	return total, nil
}

func (h *Hasher) flush() {
	h.sums = binary.BigEndian.AppendUint32(h.sums, h.crc.Sum32())
	h.crc.Reset()
	h.n = 0
}

// Segment is what was written so far as a segment.
func (h *Hasher) Segment() Segment {
	sums := h.sums
	if h.n > 0 {
		sums = binary.BigEndian.AppendUint32(append([]byte(nil), sums...), h.crc.Sum32())
	}
	return Segment{Size: h.size, Block: h.block, CRC: base64.StdEncoding.EncodeToString(sums)}
}
