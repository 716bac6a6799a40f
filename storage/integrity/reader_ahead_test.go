package integrity

import (
	"bytes"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	m, err := c.r.Read(p)
	c.n.Add(int64(m))
	return m, err
}

func (c countingReader) Close() error { return nil }

// gateWriter blocks its first write until released.
type gateWriter struct {
	out     bytes.Buffer
	release chan struct{}
	writing chan struct{}
	first   bool
}

func (g *gateWriter) Write(p []byte) (int, error) {
	if !g.first {
		g.first = true
		close(g.writing)
		<-g.release
	}
	return g.out.Write(p)
}

// While the first block is being written to a slow client, WriteTo has
// already read and checked the second from the source: the source streams
// on as it would to a client reading it straight.
func TestWriteToReadsTheNextBlockWhileOneIsWritten(t *testing.T) {
	data := randomBytes(4*MinBlock, 3)
	l := layoutOf(data)
	var read atomic.Int64
	open := func(offset, end int64, _ error) (io.ReadCloser, error) {
		return countingReader{r: bytes.NewReader(data[offset:end]), n: &read}, nil
	}
	w := &gateWriter{release: make(chan struct{}), writing: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := NewReader(l, 0, l.Size(), open).WriteTo(w)
		done <- err
	}()
	<-w.writing
	deadline := time.Now().Add(10 * time.Second)
	for read.Load() < 2*MinBlock && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := read.Load(); got < 2*MinBlock {
		t.Fatalf("while the first block was written, %d bytes were read from the source, want the second block too", got)
	}
	close(w.release)
	if err := <-done; err != nil || !bytes.Equal(w.out.Bytes(), data) {
		t.Fatalf("WriteTo: %v, %d bytes", err, w.out.Len())
	}
}
