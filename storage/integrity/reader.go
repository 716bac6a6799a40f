package integrity

import (
	"errors"
	"fmt"
	"io"
	"sync"
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
// through a caller's buffer, and reads the next block while the last one is
// written (two block buffers): the source streams as it would to a client
// reading straight from it, instead of stopping whenever w is slow.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for len(r.pending) > 0 { // what Prime or a Read left
		m, err := w.Write(r.pending)
		n += int64(m)
		r.pending = r.pending[m:]
		if err != nil {
			return n, err
		}
	}
	if r.err != nil || r.next == len(r.blocks) {
		if r.err == nil || r.err == io.EOF {
			r.err = io.EOF
			r.closeSrc()
			return n, nil
		}
		return n, r.err
	}
	type loaded struct {
		data []byte
		buf  *[]byte
		err  error
	}
	ahead := make(chan loaded, 1)
	free := make(chan *[]byte, 2)
	for range 2 {
		free <- blockBuffers.Get().(*[]byte)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // the only one to touch the source until done
		defer close(done)
		defer close(ahead)
		for ; r.next < len(r.blocks); r.next++ {
			var buf *[]byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			data, err := r.loadInto(r.blocks[r.next], buf)
			select {
			case ahead <- loaded{data, buf, err}:
			case <-stop:
				blockBuffers.Put(buf)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var werr error
	for l := range ahead {
		if l.err != nil {
			r.err = l.err
			blockBuffers.Put(l.buf)
			break
		}
		if werr == nil {
			var m int
			m, werr = w.Write(l.data)
			n += int64(m)
		}
		free <- l.buf
		if werr != nil {
			break
		}
	}
	close(stop)
	<-done
	for len(free) > 0 {
		blockBuffers.Put(<-free)
	}
	switch {
	case werr != nil:
		return n, werr
	case r.err != nil:
		r.closeSrc()
		return n, r.err
	}
	r.err = io.EOF
	r.closeSrc()
	return n, nil
}

// blockBuffers hold one block each, for WriteTo's read-ahead.
var blockBuffers = sync.Pool{New: func() any { b := make([]byte, 0, MinBlock); return &b }}

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

// load reads and checks block b into the reader's buffer as what is
// pending, moving to another source until one serves it right or none is
// left.
func (r *Reader) load(b Block) error {
	data, err := r.loadInto(b, &r.buf)
	if err == nil {
		r.pending = data
	}
	return err
}

// loadInto reads and checks block b into *buf (grown to fit), moving to
// another source until one serves it right or none is left, and returns the
// part of it the range wants.
func (r *Reader) loadInto(b Block, buf *[]byte) ([]byte, error) {
	if int64(cap(*buf)) < b.Len {
		*buf = make([]byte, b.Len)
	}
	data := (*buf)[:b.Len]
	for {
		if r.src == nil {
			last := r.blocks[len(r.blocks)-1]
			src, err := r.open(b.Offset, last.Offset+last.Len, r.failed)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNoSource, err)
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
			return data[lo:hi], nil
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
