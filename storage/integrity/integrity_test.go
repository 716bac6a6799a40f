package integrity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

func layoutOf(parts ...[]byte) Layout {
	var l Layout
	for _, p := range parts {
		h := NewHasher(BlockSizeFor(int64(len(p))))
		_, _ = h.Write(p)
		l = append(l, h.Segment())
	}
	return l
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestBlockSizeGrowsSoBlocksStayBounded(t *testing.T) {
	for _, c := range []struct{ size, want int64 }{{0, MinBlock}, {MinBlock * MaxBlocks, MinBlock},
		{MinBlock*MaxBlocks + 1, 2 * MinBlock}, {1 << 40, 256 << 20}} {
		if got := BlockSizeFor(c.size); got != c.want {
			t.Errorf("BlockSizeFor(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

// TestHasherCutsBlocksWhateverTheWrites: the checksums do not depend on how
// the bytes arrived, and every block checks against its own bytes only.
func TestHasherCutsBlocksWhateverTheWrites(t *testing.T) {
	data := randomBytes(3*MinBlock+12345, 1)
	whole := layoutOf(data)
	h := NewHasher(MinBlock)
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 777)
		_, _ = h.Write(rest[:n])
		rest = rest[n:]
	}
	if got := (Layout{h.Segment()}); fmt.Sprint(got) != fmt.Sprint(whole) {
		t.Fatalf("small writes gave %v, one write %v", got, whole)
	}
	if err := whole.Validate(); err != nil {
		t.Fatal(err)
	}
	bs := whole.Blocks(0, whole.Size())
	if len(bs) != 4 || bs[3].Len != 12345 {
		t.Fatalf("blocks %+v", bs)
	}
	for _, b := range bs {
		if err := b.Check(data[b.Offset : b.Offset+b.Len]); err != nil {
			t.Fatal(err)
		}
	}
	bad := bytes.Clone(data[bs[1].Offset : bs[1].Offset+bs[1].Len])
	bad[100] ^= 1
	if err := bs[1].Check(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a flipped bit: %v", err)
	}
}

// TestValidateRefusesLayoutsThatDisagreeWithTheirSizes.
func TestValidateRefusesLayoutsThatDisagreeWithTheirSizes(t *testing.T) {
	good := layoutOf(randomBytes(2*MinBlock+1, 2))
	for name, mutate := range map[string]func(*Segment){
		"short sums":     func(s *Segment) { s.CRC = s.CRC[:4] },
		"bigger size":    func(s *Segment) { s.Size += MinBlock },
		"odd block":      func(s *Segment) { s.Block = MinBlock + 1 },
		"tiny block":     func(s *Segment) { s.Block = 1 },
		"not base64":     func(s *Segment) { s.CRC = "!!" },
		"negative bytes": func(s *Segment) { s.Size = -1 },
	} {
		l := Layout{good[0]}
		mutate(&l[0])
		if l.Validate() == nil {
			t.Errorf("%s: accepted %+v", name, l)
		}
	}
}

// flaky serves an object from replicas, the first corrupt from a given
// block on, the second failing mid-way, the third good.
type replica struct {
	data    []byte
	failAt  int64 // the read errors once past this offset (-1: never)
	corrupt bool
}

type opener struct {
	replicas []replica
	tried    []string
}

func (o *opener) open(offset, end int64, failed error) (io.ReadCloser, error) {
	o.tried = append(o.tried, fmt.Sprintf("%d@%d:%v", len(o.tried), offset, failed != nil))
	i := len(o.tried) - 1
	if i >= len(o.replicas) {
		return nil, errors.New("none left")
	}
	r := o.replicas[i]
	data := r.data[offset:end]
	var rd io.Reader = bytes.NewReader(data)
	if r.failAt >= 0 {
		rd = io.MultiReader(bytes.NewReader(data[:max(0, r.failAt-offset)]), errReader{})
	}
	return io.NopCloser(rd), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestReaderMovesToAnotherSourceAtTheBadBlock: a corrupt replica and one
// that fails mid-way still give the exact bytes of every range.
func TestReaderMovesToAnotherSourceAtTheBadBlock(t *testing.T) {
	part1, part2 := randomBytes(2*MinBlock+500, 3), randomBytes(MinBlock+7, 4)
	data := append(bytes.Clone(part1), part2...)
	l := layoutOf(part1, part2)
	corrupt := bytes.Clone(data)
	corrupt[MinBlock+10] ^= 0xff // in the second block
	for _, rg := range [][2]int64{{0, int64(len(data))}, {MinBlock + 5, 100}, {int64(len(part1)) - 3, 10}, {int64(len(data)) - 1, 1}} {
		o := &opener{replicas: []replica{{data: corrupt, failAt: -1}, {data: data, failAt: 2*MinBlock + 100}, {data: data, failAt: -1}}}
		got, err := io.ReadAll(NewReader(l, rg[0], rg[1], o.open))
		if err != nil || !bytes.Equal(got, data[rg[0]:rg[0]+rg[1]]) {
			t.Fatalf("range %v: %d bytes, %v (tried %v)", rg, len(got), err, o.tried)
		}
	}
	// WriteTo hands the same bytes over without a caller's buffer
	o := &opener{replicas: []replica{{data: corrupt, failAt: -1}, {data: data, failAt: -1}}}
	var out bytes.Buffer
	if n, err := NewReader(l, 7, int64(len(data))-7, o.open).WriteTo(&out); err != nil || n != int64(len(data))-7 || !bytes.Equal(out.Bytes(), data[7:]) {
		t.Fatalf("WriteTo: %d bytes, %v", n, err)
	}
	o = &opener{replicas: []replica{{data: corrupt, failAt: -1}}}
	if _, err := io.ReadAll(NewReader(l, 0, l.Size(), o.open)); !errors.Is(err, ErrNoSource) {
		t.Fatalf("only a corrupt replica: %v", err)
	}
}

func TestCheckFindsCorruptShortAndLongReplicas(t *testing.T) {
	data := randomBytes(MinBlock+3, 5)
	l := layoutOf(data)
	if err := Check(l, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(data)
	bad[len(bad)-1] ^= 1
	for name, r := range map[string][]byte{"corrupt": bad, "short": data[:len(data)-1], "long": append(bytes.Clone(data), 0)} {
		if Check(l, bytes.NewReader(r)) == nil {
			t.Errorf("%s replica passed", name)
		}
	}
}

// FuzzLayout: a layout read back from the catalogue either fails
// validation or yields blocks that tile exactly the range asked for.
func FuzzLayout(f *testing.F) {
	seed, _ := json.Marshal(layoutOf(randomBytes(MinBlock+1, 6), nil))
	f.Add(seed, int64(5), int64(MinBlock))
	f.Add([]byte(`[{"size":3,"block":1048576,"crc32c":"AAAAAA=="}]`), int64(0), int64(3))
	f.Fuzz(func(t *testing.T, data []byte, start, length int64) {
		var l Layout
		if json.Unmarshal(data, &l) != nil || l.Validate() != nil {
			return
		}
		size := l.Size()
		if size < 0 || start < 0 || length < 0 || start > size || length > size-start {
			return
		}
		next := start
		for _, b := range l.Blocks(start, length) {
			if b.Offset > next || b.Offset+b.Len <= next || b.Len <= 0 {
				t.Fatalf("blocks do not tile [%d,+%d): %+v at %d", start, length, b, next)
			}
			next = b.Offset + b.Len
		}
		if length > 0 && next < start+length {
			t.Fatalf("blocks end at %d, range at %d", next, start+length)
		}
	})
}

// failingWriter takes limit bytes, then fails.
type failingWriter struct{ limit int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n := f.limit
		f.limit = 0
		return n, errors.New("client went away")
	}
	f.limit -= len(p)
	return len(p), nil
}

// closeCounter counts the sources closed.
type closeCounter struct {
	io.Reader
	closed *int
}

func (c closeCounter) Close() error { *c.closed++; return nil }

// TestWriteToPassesCheckedBytesAndStopsCleanly: WriteTo passes on exactly
// the checked bytes across a bad block (primed first, as the front does, or
// not), stops at a writer's error (Close then closes the source), and
// reports a source that runs out.
func TestWriteToPassesCheckedBytesAndStopsCleanly(t *testing.T) {
	data := randomBytes(5*MinBlock+123, 9)
	l := layoutOf(data)
	corrupt := bytes.Clone(data)
	corrupt[3*MinBlock+1] ^= 0xff
	for _, prime := range []bool{false, true} {
		o := &opener{replicas: []replica{{data: corrupt, failAt: -1}, {data: data, failAt: 4*MinBlock + 9}, {data: data, failAt: -1}}}
		r := NewReader(l, 11, int64(len(data))-11, o.open)
		if prime {
			if err := r.Prime(); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		if n, err := r.WriteTo(&out); err != nil || n != int64(len(data))-11 || !bytes.Equal(out.Bytes(), data[11:]) {
			t.Fatalf("primed %v: %d bytes, %v (tried %v)", prime, n, err, o.tried)
		}
		if len(o.tried) != 3 {
			t.Fatalf("primed %v: sources tried %v, want the corrupt one, the failing one and the good one", prime, o.tried)
		}
	}
	closed := 0
	open := func(offset, end int64, _ error) (io.ReadCloser, error) {
		return closeCounter{Reader: bytes.NewReader(data[offset:end]), closed: &closed}, nil
	}
	w := &failingWriter{limit: 2*MinBlock + 5}
	r := NewReader(l, 0, l.Size(), open)
	if n, err := r.WriteTo(w); err == nil || n != 2*MinBlock+5 {
		t.Fatalf("a failing writer: %d bytes written, %v", n, err)
	}
	if r.Close(); closed != 1 {
		t.Fatalf("after a failing writer and Close, %d sources closed", closed)
	}
	o := &opener{replicas: []replica{{data: data, failAt: 2 * MinBlock}}}
	var out bytes.Buffer
	if n, err := NewReader(l, 0, l.Size(), o.open).WriteTo(&out); !errors.Is(err, ErrNoSource) || n != 2*MinBlock {
		t.Fatalf("a source that fails with none left: %d bytes, %v", n, err)
	}
}
