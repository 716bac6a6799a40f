package front

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/integrity"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// missing is the error for an object or upload that is not there:
// NoSuchBucket when its bucket is gone too, else notFound. Only a miss reads
// the bucket: the gateway reads it (GetBucketAcl) before every request.
func (b *Backend) missing(ctx context.Context, bucket string, notFound error) error {
	if _, err := b.bucket(ctx, bucket); err != nil {
		return err
	}
	return notFound
}

func (b *Backend) entry(ctx context.Context, bucket, key string) (catalog.Entry, error) {
	e, err := b.cat.Get(ctx, bucket, key)
	if errors.Is(err, catalog.ErrNotFound) {
		return e, b.missingKey(ctx, bucket)
	}
	return e, err
}

// missingKey is the error for a key bucket does not hold.
func (b *Backend) missingKey(ctx context.Context, bucket string) error {
	return b.missing(ctx, bucket, s3err.GetAPIError(s3err.ErrNoSuchKey))
}

// HeadObject answers from the catalogue alone, If-Match, If-None-Match
// and If-(Un)Modified-Since included.
func (b *Backend) HeadObject(ctx context.Context, in *s3.HeadObjectInput) (*s3.HeadObjectOutput, error) {
	req := b.request(ctx)
	defer req.cancel()
	e, err := b.entryOf(ctx, req.ctx, *in.Bucket, *in.Key)
	if err == nil {
		err = preconditions(e, in.IfMatch, in.IfNoneMatch, in.IfModifiedSince, in.IfUnmodifiedSince)
	}
	if err != nil {
		return nil, b.fail("head", err)
	}
	out := &s3.HeadObjectOutput{ContentLength: &e.Size, ETag: &e.ETag, LastModified: &e.LastModified,
		Metadata: e.UserMeta, ContentType: nonEmpty(e.ContentType), AcceptRanges: ptr("bytes")}
	if in.ChecksumMode == types.ChecksumModeEnabled {
		checksumFields(e.Checksum, &out.ChecksumCRC32, &out.ChecksumCRC32C, &out.ChecksumSHA1, &out.ChecksumSHA256, &out.ChecksumCRC64NVME)
	}
	return out, nil
}

// preconditions checks a read's If-Match, If-None-Match and
// If-(Un)Modified-Since against the catalogue's ETag and time: 412
// PreconditionFailed or 304 NotModified as S3 answers them.
func preconditions(e catalog.Entry, ifMatch, ifNoneMatch *string, since, unmodifiedSince *time.Time) error {
	return backend.EvaluatePreconditions(e.ETag, e.LastModified, backend.PreConditions{IfMatch: ifMatch,
		IfNoneMatch: ifNoneMatch, IfModSince: since, IfUnmodeSince: unmodifiedSince})
}

// GetObject serves the bytes from a replica whose node is up and not busy,
// least loaded first, checking every block against the catalogue's block
// checksums before passing it on: a bad or unreadable replica is skipped
// (counted, and queued for the scrubber when bad or missing) and the read
// goes on from the next at the same block. When every replica is busy the
// read fails with SlowDown; when none is left, XHarvestDataLost. A bucket
// tagged harvest-read=redirect is answered with a redirect to a replica
// instead (redirect.go).
func (b *Backend) GetObject(ctx context.Context, in *s3.GetObjectInput) (*s3.GetObjectOutput, error) {
	req := b.request(ctx) // cancelled when the body is closed
	e, err := b.entryOf(ctx, req.ctx, *in.Bucket, *in.Key)
	if err == nil { // before a redirect hands the read to a node's copy, whose ETag may differ
		err = preconditions(e, in.IfMatch, in.IfNoneMatch, in.IfModifiedSince, in.IfUnmodifiedSince)
	}
	if err != nil {
		req.cancel()
		return nil, b.fail("get", err)
	}
	if rc, ok, err := b.redirects(ctx, req.ctx, in); err != nil || ok {
		if err == nil {
			err = b.redirect(req.ctx, rc, e)
		}
		req.cancel()
		return nil, b.fail("get", err)
	}
	start, length, ranged, err := backend.ParseObjectRange(e.Size, deref(in.Range))
	if err != nil {
		req.cancel()
		return nil, err
	}
	body, err := b.openObject(req, e, start, length)
	if err != nil {
		req.cancel()
		return nil, b.fail("get", err)
	}
	b.metrics.reads.Inc()
	out := &s3.GetObjectOutput{Body: body, ContentLength: &length, ETag: &e.ETag, LastModified: &e.LastModified,
		Metadata: e.UserMeta, ContentType: nonEmpty(e.ContentType), AcceptRanges: ptr("bytes")}
	if ranged {
		out.ContentRange = ptr(fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, e.Size))
	} else if in.ChecksumMode == types.ChecksumModeEnabled {
		checksumFields(e.Checksum, &out.ChecksumCRC32, &out.ChecksumCRC32C, &out.ChecksumSHA1, &out.ChecksumSHA256, &out.ChecksumCRC64NVME)
	}
	return out, nil
}

// readable are the replicas a read may use now, least loaded first, and
// the error when there is none.
func (b *Backend) readable(e catalog.Entry) ([]catalog.Replica, error) {
	out, busy := b.readableNow(e)
	b.metrics.busyDenials.Add(float64(busy))
	switch {
	case len(out) > 0:
		return out, nil
	case len(e.Replicas) == 0:
		b.metrics.readFailures.Inc()
		return nil, errDataLost
	case busy > 0:
		b.metrics.readFailures.Inc()
		return nil, errBusy
	default:
		b.metrics.readFailures.Inc()
		return nil, errors.New("every node holding a replica is down")
	}
}

// readableNow are the replicas on nodes up and not busy, least loaded first,
// and how many were skipped as busy.
func (b *Backend) readableNow(e catalog.Entry) (out []catalog.Replica, busy int) {
	for _, r := range e.Replicas {
		if b.nodes.Client(r.Node) == nil || !b.nodes.Up(r.Node) {
			continue
		}
		if b.nodes.Busy(r.Node) {
			busy++
			continue
		}
		out = append(out, r)
	}
	b.nodes.ByReadCost(out)
	return out, busy
}

// readRetryWaits are the pauses before a read that found every replica
// failing for the nodes' own trouble (a node restarting, a call refused with
// SlowDown) tries the replicas again, from the block where it stopped: 3.75 s
// in all, long enough for a storage node that crashed and restarts.
var readRetryWaits = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}

// openObject opens bytes [start, start+length) of e, checked block by
// block, moving from replica to replica as they fail; the first block is
// read before it returns, so a read no replica can serve fails as an error.
func (b *Backend) openObject(req *request, e catalog.Entry, start, length int64) (io.ReadCloser, error) {
	cands, err := b.readable(e)
	if err != nil {
		return nil, err
	}
	var current *catalog.Replica
	next, transient, retries := 0, false, 0
	bad := map[catalog.Replica]bool{} // failed a checksum or missing: never offered again
	failed := func(r catalog.Replica, err error) {
		if b.replicaFailed(e, r, err) {
			bad[r] = true
		} else {
			transient = true
		}
	}
	open := func(offset, end int64, err error) (io.ReadCloser, error) {
		if err != nil && current != nil {
			failed(*current, err)
		}
		for {
			for next < len(cands) {
				r := cands[next]
				next++
				if bad[r] {
					continue
				}
				src, err := b.openRange(req.ctx, r, offset, end, e.Size)
				if err == nil {
					current = &r
					return src, nil
				}
				failed(r, err)
			}
			current = nil
			// every replica failed; when a node's own trouble was the cause,
			// wait and try those up again from this block (a ranged re-read)
			if !transient || retries == len(readRetryWaits) {
				return nil, errors.New("no replica left to read from")
			}
			select {
			case <-time.After(readRetryWaits[retries]):
			case <-req.ctx.Done():
				return nil, req.ctx.Err()
			}
			retries++
			b.metrics.readRetries.Inc()
			cands, _ = b.readableNow(e)
			next, transient = 0, false
		}
	}
	var body io.ReadCloser
	if len(e.Layout) == 0 { // written before block checksums: served unchecked
		body, err = open(start, start+length, nil)
	} else {
		r := integrity.NewReader(e.Layout, start, length, open)
		body, err = r, r.Prime()
	}
	if err != nil {
		b.metrics.readFailures.Inc()
		if transient {
			return nil, fmt.Errorf("no replica of %s/%s could be read now: %w", e.Bucket, e.Key, err)
		}
		return nil, errDataLost
	}
	return bigChunks{ReadCloser: &endRequest{ReadCloser: body, req: req}, conn: req}, nil
}

// endRequest ends the request's context when its body is closed.
type endRequest struct {
	io.ReadCloser
	req  *request
	once sync.Once
}

func (e *endRequest) Close() error {
	err := e.ReadCloser.Close()
	e.once.Do(e.req.cancel)
	return err
}

// openRange reads [offset, end) of one replica within one of its node's
// slots; the read is cancelled when the node sends nothing for the node
// timeout.
func (b *Backend) openRange(ctx context.Context, r catalog.Replica, offset, end, size int64) (io.ReadCloser, error) {
	release, err := b.nodes.Acquire(ctx, r.Node)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	st := nodes.NewStall(b.timeouts.Node, cancel)
	done := b.nodes.StartRead(r.Node)
	finish := func() {
		st.Stop()
		cancel()
		done()
		release()
	}
	opts := minio.GetObjectOptions{}
	if end > offset && (offset > 0 || end < size) {
		_ = opts.SetRange(offset, end-1)
	}
	began := time.Now()
	body, _, _, err := b.nodes.Client(r.Node).GetObject(ctx, DataBucket, r.Name, opts)
	if err != nil {
		finish()
		return nil, err
	}
	st.Touch()
	b.nodes.ObserveRead(r.Node, time.Since(began)) // the node's answer with its headers: its time to first byte
	return &nodeBody{r: nodes.ProgressReader{R: body, S: st}, c: body, finish: finish}, nil
}

// nodeBody is one replica's bytes; closing it gives its slot back.
type nodeBody struct {
	r      io.Reader
	c      io.Closer
	once   sync.Once
	finish func()
}

func (n *nodeBody) Read(p []byte) (int, error) { return n.r.Read(p) }

func (n *nodeBody) Close() error {
	err := n.c.Close()
	n.once.Do(n.finish)
	return err
}

// replicaFailed notes a replica a read gave up: a bad block or a missing
// replica is counted and queued for the scrubber (which checks it again and
// has it re-created), and it answers true; anything else is the node's
// trouble, logged, and it answers false.
func (b *Backend) replicaFailed(e catalog.Entry, r catalog.Replica, err error) bool {
	switch {
	case errors.Is(err, integrity.ErrCorrupt):
		b.metrics.corruptReads.Inc()
		b.log.Warn("a replica failed its checksum; reading another and queueing it for the scrubber",
			"bucket", e.Bucket, "key", e.Key, "node", r.Node, "error", err)
		b.upkeep.Suspect(e.Bucket, e.Key, r)
		return true
	case minio.ToErrorResponse(err).Code == "NoSuchKey":
		b.metrics.missingReads.Inc()
		b.log.Warn("a replica is missing on its node; reading another and queueing it for the scrubber",
			"bucket", e.Bucket, "key", e.Key, "node", r.Node)
		b.upkeep.Suspect(e.Bucket, e.Key, r)
		return true
	default:
		b.log.Warn("replica unreadable; trying the next", "bucket", e.Bucket, "key", e.Key, "node", r.Node, "error", err)
		return false
	}
}

// bigChunks hands a replica's body to the S3 server in 1 MiB writes: the
// server copies a body that is an io.WriterTo through WriteTo, and large
// writes go straight to the socket instead of through its 4 KiB buffer.
// Each write must leave within the client idle timeout.
type bigChunks struct {
	io.ReadCloser
	conn *request
}

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

func (c bigChunks) WriteTo(w io.Writer) (int64, error) {
	out := idleWriter{w: w, conn: c.conn.conn, idle: c.conn.idle}
	if e, ok := c.ReadCloser.(*endRequest); ok {
		if wt, ok := e.ReadCloser.(io.WriterTo); ok { // checked blocks go out as they are, 1 MiB or more each
			return wt.WriteTo(out)
		}
	}
	buf := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(buf)
	return io.CopyBuffer(out, onlyReader{c.ReadCloser}, *buf)
}

// onlyReader hides WriteTo so CopyBuffer uses the buffer.
type onlyReader struct{ io.Reader }
