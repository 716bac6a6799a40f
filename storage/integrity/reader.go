package integrity

import (
	"errors"
	"fmt"
	"io"
)

// Opener opens a source of the object's bytes from offset to end (a block
// boundary and the end of the last block wanted). failed is why the last
// source was given up (nil the first time): the opener should not offer the
// same source again after a checksum failure. It answers an error when no
// source is left.
type Opener func(offset, end int64, failed error) (io.ReadCloser, error)

// Reader serves bytes [start, start+length) of an object whose blocks it
// checks one by one before passing any of their bytes on: a bad block, or a
// source that fails, makes it open another source at that block.
type Reader struct {
	blocks  []Block
	next    int
	start   int64
	end     int64 // of the range served
	open    Opener
	src     io.ReadCloser
	failed  error
	buf     []byte
	pending []byte
	err     error
}

// NewReader reads [start, start+length) of an object with layout l through
// open. The layout must be valid and the range inside it.
func NewReader(l Layout, start, length int64, open Opener) *Reader {
	return &Reader{blocks: l.Blocks(start, length), start: start, end: start + length, open: open}
}

// ErrNoSource wraps the last failure when the opener has nothing left.
var ErrNoSource = errors.New("integrity: no good source left")

func (r *Reader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.next == len(r.blocks) {
			r.err = io.EOF
			r.closeSrc()
			return 0, io.EOF
		}
		if err := r.load(r.blocks[r.next]); err != nil {
			r.err = err
			r.closeSrc()
			return 0, err
		}
		r.next++
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// WriteTo writes every checked block straight to w, without copying it
// through a caller's buffer, and reads and checks the next block while it
// writes one (two buffers), so that the source and w are busy at the same
// time instead of in turn.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	if len(r.pending) > 0 { // what Prime or a Read left
		m, err := w.Write(r.pending)
		n += int64(m)
		r.pending = r.pending[m:]
		if err != nil {
			return n, err
		}
	}
	if r.err == nil && r.next < len(r.blocks) {
		m, err := r.writeAhead(w)
		n += m
		if err != nil {
			return n, err
		}
	}
	if r.err != nil && r.err != io.EOF {
		return n, r.err
	}
	r.err = io.EOF
	r.closeSrc()
	return n, nil
}

// loaded is one block read ahead: its checked bytes in buf, or why not.
type loaded struct {
	buf, data []byte
	err       error
}

// writeAhead writes the blocks from r.next on to w while a goroutine reads
// and checks the one after; only that goroutine touches the source until
// it has ended.
func (r *Reader) writeAhead(w io.Writer) (int64, error) {
	free := make(chan []byte, 2)
	free <- r.buf
	free <- nil
	ready := make(chan loaded, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ready)
		for r.next < len(r.blocks) {
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			b := r.blocks[r.next]
			buf, data, err := r.loadInto(buf, b)
			r.next++
			select {
			case ready <- loaded{buf, data, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var n int64
	var err error
	for l := range ready {
		if l.err != nil {
			r.err, err = l.err, l.err
			break
		}
		var m int
		m, err = w.Write(l.data)
		n += int64(m)
		if err != nil {
			break
		}
		free <- l.buf
		r.buf = l.buf
	}
	close(stop)
	<-done
	if err != nil {
		r.closeSrc()
	}
	return n, err
}

// Prime reads and checks the first block, so that a read no source can
// serve fails before any of its bytes are passed on.
func (r *Reader) Prime() error {
	if r.err != nil || len(r.pending) > 0 || r.next == len(r.blocks) {
		return nil
	}
	if err := r.load(r.blocks[r.next]); err != nil {
		r.err = err
		r.closeSrc()
		return err
	}
	r.next++
	return nil
}

// load reads and checks block b into r.pending, moving to another source
// until one serves it right or none is left.
func (r *Reader) load(b Block) error {
	buf, data, err := r.loadInto(r.buf, b)
	r.buf = buf
	if err == nil {
		r.pending = data
	}
	return err
}

// loadInto reads and checks block b into buf (grown to fit, returned),
// moving to another source until one serves it right or none is left, and
// returns the part of the block inside the range served.
func (r *Reader) loadInto(buf []byte, b Block) ([]byte, []byte, error) {
	if int64(cap(buf)) < b.Len {
		buf = make([]byte, b.Len)
	}
	data := buf[:b.Len]
	for {
		if r.src == nil {
			last := r.blocks[len(r.blocks)-1]
			src, err := r.open(b.Offset, last.Offset+last.Len, r.failed)
			if err != nil {
				return buf, nil, fmt.Errorf("%w: %w", ErrNoSource, err)
			}
			r.src = src
		}
		_, err := io.ReadFull(r.src, data)
		if err == nil {
			err = b.Check(data)
		}
		if err == nil {
			lo := max(r.start, b.Offset) - b.Offset
			hi := min(r.end, b.Offset+b.Len) - b.Offset
			return buf, data[lo:hi], nil
		}
		r.failed = err
		r.closeSrc()
	}
}

func (r *Reader) closeSrc() {
	if r.src != nil {
		_ = r.src.Close()
		r.src = nil
	}
}

// Close closes the current source.
func (r *Reader) Close() error {
	r.closeSrc()
	if r.err == nil {
		r.err = errors.New("integrity: read after close")
	}
	return nil
}

// Check reads a whole object from src and checks every block: nil when
// every byte is as recorded, ErrCorrupt (or the read's error) otherwise.
func Check(l Layout, src io.Reader) error {
	var buf []byte
	for _, b := range l.Blocks(0, l.Size()) {
		if int64(cap(buf)) < b.Len {
			buf = make([]byte, b.Len)
		}
		if _, err := io.ReadFull(src, buf[:b.Len]); err != nil {
			return fmt.Errorf("reading the block at %d: %w", b.Offset, err)
		}
		if err := b.Check(buf[:b.Len]); err != nil {
			return err
		}
	}
	// a replica longer than recorded is not the object either
	if n, _ := io.ReadFull(src, make([]byte, 1)); n > 0 {
		return fmt.Errorf("%w: more bytes than the %d recorded", ErrCorrupt, l.Size())
	}
	return nil
}
