package front

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// request is one S3 request's context: its deadline (nodes.Timeouts.Request),
// and the client's connection, whose deadlines keep a client that stops
// sending or taking bytes from holding the request (nodes.Timeouts.Idle).
//
// versitygw hands the backend fasthttp's RequestCtx, which fasthttp reuses
// once the request ends and which never says the client left; the work is
// therefore done under a context of its own.
type request struct {
	ctx    context.Context
	cancel context.CancelFunc
	conn   net.Conn // nil outside a server (tests)
	idle   time.Duration
}

func (b *Backend) request(parent context.Context) *request {
	r := &request{idle: b.timeouts.Idle}
	r.ctx, r.cancel = context.WithTimeout(context.Background(), b.timeouts.Request)
	if rc, ok := parent.(*fasthttp.RequestCtx); ok {
		r.conn = rc.Conn()
	}
	return r
}

// body wraps a request body so that each read must bring bytes within the
// idle timeout.
func (r *request) body(body io.Reader) io.Reader {
	if r.conn == nil || body == nil {
		return body
	}
	return idleReader{r: body, conn: r.conn, idle: r.idle}
}

type idleReader struct {
	r    io.Reader
	conn net.Conn
	idle time.Duration
}

func (i idleReader) Read(p []byte) (int, error) {
	_ = i.conn.SetReadDeadline(time.Now().Add(i.idle))
	return i.r.Read(p)
}

// idleWriter gives each write to the client the idle timeout.
type idleWriter struct {
	w    io.Writer
	conn net.Conn
	idle time.Duration
}

func (i idleWriter) Write(p []byte) (int, error) {
	if i.conn != nil {
		_ = i.conn.SetWriteDeadline(time.Now().Add(i.idle))
	}
	return i.w.Write(p)
}

// maxDrain is the most of a refused request's body the front reads and
// throws away so that the client, still sending, reads the S3 error instead
// of a connection reset (versitygw drains 256 KiB itself).
const maxDrain = 128 << 20

// drain reads what is left of a request body that was refused before it
// was read, when it is not too large.
func (r *request) drain(body io.Reader, size int64) {
	if body == nil || size > maxDrain {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.body(body), size))
}
