package front

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
)

// replicaName is a new, unique name on the nodes for one version of an
// object, so that an overwrite never touches a replica a reader may use.
func replicaName(bucket, key string) string {
	sum := sha256.Sum256([]byte(bucket + "/" + key))
	var nonce [8]byte
	_, _ = randRead(nonce[:])
	return "o/" + hex.EncodeToString(sum[:16]) + "/" + hex.EncodeToString(nonce[:])
}

// PutObject streams the body to R nodes at once (placed by Algorithm 2) and
// records the object in the catalogue only when every replica is written:
// a failed write leaves nothing visible, and removes what it wrote.
func (b *Backend) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	bucket, key := *in.Bucket, *in.Key
	info, err := b.bucket(ctx, bucket)
	if err != nil {
		return s3response.PutObjectOutput{}, err
	}
	if err := catalog.ValidateKey(key); err != nil {
		return s3response.PutObjectOutput{}, s3err.GetAPIError(s3err.ErrInvalidRequest)
	}
	if in.ContentLength == nil {
		return s3response.PutObjectOutput{}, s3err.GetAPIError(s3err.ErrMissingContentLength)
	}
	entry := catalog.Entry{Bucket: bucket, Key: key, Size: *in.ContentLength,
		ContentType: deref(in.ContentType), UserMeta: in.Metadata}
	entry, err = b.store(ctx, entry, in.Body, b.policyOf(info))
	if err != nil {
		return s3response.PutObjectOutput{}, err
	}
	return s3response.PutObjectOutput{ETag: entry.ETag, Size: &entry.Size}, nil
}

// store writes a new object (or version) of e.Size bytes from body to
// nodes placed by Algorithm 2 and records it in the catalogue.
func (b *Backend) store(ctx context.Context, e catalog.Entry, body io.Reader, pol policy) (catalog.Entry, error) {
	place, err := b.reserve(e.Size, pol.replicas, pol.strict, nil)
	if err != nil {
		b.log.Warn("no placement", "bucket", e.Bucket, "key", e.Key, "size", e.Size, "error", err)
		return e, s3err.GetAPIError(s3err.ErrSlowDown)
	}
	e.LastModified = time.Now().UTC().Truncate(time.Second)
	e.Degraded = place.Degraded
	name := replicaName(e.Bucket, e.Key)
	sum, err := b.putReplicas(ctx, place.Nodes, name, body, e)
	if err != nil {
		b.release(place, e.Size)
		return e, err
	}
	e.ETag = `"` + hex.EncodeToString(sum) + `"`
	return e, b.record(ctx, e, place, name)
}

// reserve places an object and holds its space in the grid until the write
// ends (release gives it back when it fails).
func (b *Backend) reserve(size int64, replicas int, strict bool, existing []string) (grid.Placement, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	place, err := b.grid.Place(grid.Request{Size: size, Replicas: replicas, Strict: strict, Existing: existing}, b.rng)
	if err == nil {
		b.grid.Commit(place, size)
	}
	return place, err
}

// record puts a written object into the catalogue and deletes the replicas
// of the version it replaces; if the catalogue refuses, the new replicas go.
func (b *Backend) record(ctx context.Context, e catalog.Entry, place grid.Placement, name string) error {
	for _, n := range place.Nodes {
		e.Replicas = append(e.Replicas, catalog.Replica{Node: n, Name: name})
		b.nodes.addUsed(n, e.Size)
	}
	prev, err := b.cat.Put(ctx, e)
	if err != nil {
		b.removeReplicas(e)
		b.release(place, e.Size)
		return err
	}
	if prev != nil {
		b.removeReplicas(*prev)
	}
	b.metrics.writes.Inc()
	if place.Degraded {
		b.metrics.degraded.Inc()
		b.log.Warn("degraded placement", "bucket", e.Bucket, "key", e.Key, "reason", place.Reason)
	}
	return nil
}

// writeReplicas copies body once into a pipe per node, where write sends it
// on, and returns its MD5. When any node or the body fails, undo removes
// what the nodes that succeeded wrote.
func (b *Backend) writeReplicas(ctx context.Context, nodeIDs []string, body io.Reader, size int64,
	write func(ctx context.Context, node string, r io.Reader) error, undo func(node string)) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	writers := make([]*io.PipeWriter, len(nodeIDs))
	errs := make([]error, len(nodeIDs))
	var wg sync.WaitGroup
	for i, id := range nodeIDs {
		pr, pw := io.Pipe()
		writers[i] = pw
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = write(ctx, id, pr)
			pr.CloseWithError(errs[i]) // unblock the copy if this node failed
		}()
	}
	h := md5.New()
	ws := []io.Writer{h}
	for _, w := range writers {
		ws = append(ws, w)
	}
	src := &readErr{r: body}
	n, copyErr := io.CopyBuffer(io.MultiWriter(ws...), src, make([]byte, 1<<20))
	if copyErr == nil && n != size {
		copyErr = fmt.Errorf("body had %d bytes, Content-Length said %d", n, size)
	}
	for _, w := range writers {
		w.CloseWithError(copyErr)
	}
	if copyErr != nil {
		cancel()
	}
	wg.Wait()
	if err := errors.Join(errs...); copyErr != nil || err != nil {
		for i, id := range nodeIDs {
			if errs[i] == nil {
				undo(id)
			}
		}
		if src.err != nil { // the client's body failed (or its signature check): versitygw answers it
			return nil, src.err
		}
		if copyErr != nil && err == nil {
			return nil, copyErr // a short body
		}
		b.metrics.writeFailures.Inc()
		b.log.Warn("replica write failed", "nodes", nodeIDs, "error", err) // a node failed: the client may retry
		return nil, s3err.GetAPIError(s3err.ErrSlowDown)
	}
	return h.Sum(nil), nil
}

// putReplicas writes e's body to every node as the replica name (carrying
// e as metadata) and returns its MD5; on failure nothing stays behind.
func (b *Backend) putReplicas(ctx context.Context, nodeIDs []string, name string, body io.Reader, e catalog.Entry) ([]byte, error) {
	meta := catalog.Meta(e)
	return b.writeReplicas(ctx, nodeIDs, body, e.Size, func(ctx context.Context, node string, r io.Reader) error {
		return b.putReplica(ctx, node, name, r, e.Size, meta)
	}, func(node string) { b.removeObject(node, name) })
}

// removeObject deletes an object from a node, whatever the request's fate.
func (b *Backend) removeObject(node, name string) {
	_ = b.nodes.client(node).RemoveObject(context.Background(), DataBucket, name, minio.RemoveObjectOptions{})
}

// putReplica writes one replica. The body is sent unsigned (signing it
// would hash every byte once more per replica, on the front's cores); its
// integrity is checked instead by the MD5 the node computes, which must be
// the one the front computed of what the client sent.
func (b *Backend) putReplica(ctx context.Context, node, name string, r io.Reader, size int64, meta map[string]string) error {
	h := md5.New()
	info, err := b.nodes.client(node).PutObject(ctx, DataBucket, name, io.TeeReader(r, h), size, "", "",
		minio.PutObjectOptions{UserMetadata: meta, DisableMultipart: true, DisableContentSha256: true})
	if err == nil && strings.Trim(info.ETag, `"`) != hex.EncodeToString(h.Sum(nil)) {
		err = fmt.Errorf("node %s stored %s with MD5 %s, the front sent %x", node, name, info.ETag, h.Sum(nil))
	}
	return err
}

// readErr remembers the error reading the client's body gave, to tell it
// from a node failing.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// commit takes size off the placement's nodes in the grid; release gives
// it back.
func (b *Backend) commit(p grid.Placement, size int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grid.Commit(p, size)
}

func (b *Backend) release(p grid.Placement, size int64) { b.commit(p, -size) }

// removeReplicas deletes an entry's replicas in the background.
func (b *Backend) removeReplicas(e catalog.Entry) {
	for _, r := range e.Replicas {
		go func() {
			if c := b.nodes.client(r.Node); c != nil {
				if err := c.RemoveObject(context.Background(), DataBucket, r.Name, minio.RemoveObjectOptions{}); err == nil {
					b.nodes.addUsed(r.Node, -e.Size)
				}
			}
		}()
	}
}

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
		return e, b.missing(ctx, bucket, s3err.GetAPIError(s3err.ErrNoSuchKey))
	}
	return e, err
}

// HeadObject answers from the catalogue alone.
func (b *Backend) HeadObject(ctx context.Context, in *s3.HeadObjectInput) (*s3.HeadObjectOutput, error) {
	e, err := b.entry(ctx, *in.Bucket, *in.Key)
	if err != nil {
		return nil, err
	}
	return &s3.HeadObjectOutput{ContentLength: &e.Size, ETag: &e.ETag, LastModified: &e.LastModified,
		Metadata: e.UserMeta, ContentType: nonEmpty(e.ContentType), AcceptRanges: ptr("bytes")}, nil
}

// GetObject reads from the first replica whose node is not busy and
// answers; when every replica is busy or gone the read fails with SlowDown,
// which clients retry.
func (b *Backend) GetObject(ctx context.Context, in *s3.GetObjectInput) (*s3.GetObjectOutput, error) {
	e, err := b.entry(ctx, *in.Bucket, *in.Key)
	if err != nil {
		return nil, err
	}
	start, length, ranged, err := backend.ParseObjectRange(e.Size, deref(in.Range))
	if err != nil {
		return nil, err
	}
	body, err := b.openReplica(ctx, e, start, length)
	if err != nil {
		return nil, err
	}
	b.metrics.reads.Inc()
	out := &s3.GetObjectOutput{Body: body, ContentLength: &length, ETag: &e.ETag, LastModified: &e.LastModified,
		Metadata: e.UserMeta, ContentType: nonEmpty(e.ContentType), AcceptRanges: ptr("bytes")}
	if ranged {
		out.ContentRange = ptr(fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, e.Size))
	}
	return out, nil
}

// DeleteObject removes the catalogue entry, then the replicas.
func (b *Backend) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput) (*s3.DeleteObjectOutput, error) {
	e, err := b.cat.Delete(ctx, *in.Bucket, *in.Key)
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		if err := b.missing(ctx, *in.Bucket, nil); err != nil {
			return nil, err
		}
		return &s3.DeleteObjectOutput{}, nil // as S3: deleting nothing succeeds
	case err != nil:
		return nil, err
	}
	b.removeReplicas(e)
	return &s3.DeleteObjectOutput{}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptr[T any](v T) *T { return &v }
