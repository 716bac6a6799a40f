package objects

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/integrity"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// claimTTL is how long a Complete's claim on an upload holds before
// another Complete or an Abort may take it over.
func (w *Writer) claimTTL() time.Duration { return max(time.Minute, 6*w.timeouts.Node) }

// errRetry makes Complete and Abort read the upload again.
var errRetry = errors.New("the upload changed; reading it again")

// Complete claims the upload id of bucket/key, completes it on every
// node, checks what each node made of it, then writes the entry and
// retires the upload in one transaction. etag is the multipart ETag of the
// client's part list, parts. A retried Complete of an upload completed
// with the same parts answers as the first did. The names must not be
// buffers a server reuses: the upload's clean-up outlives the request.
func (w *Writer) Complete(ctx context.Context, bucket, key, id, etag string, parts []types.CompletedPart) error {
	var token [8]byte
	_, _ = randRead(token[:])
	c := &completion{w: w, bucket: bucket, key: key, id: id, etag: etag, claim: hex.EncodeToString(token[:]), parts: parts}
	for {
		err := c.attempt(ctx)
		if errors.Is(err, errRetry) {
			continue
		}
		return err
	}
}

// completion is one Complete request's work.
type completion struct {
	w               *Writer
	bucket, key, id string
	etag, claim     string
	parts           []types.CompletedPart // the client's list
}

// attempt reads the upload and takes it one step towards the end:
// errRetry when it has to read it again.
func (c *completion) attempt(ctx context.Context) error {
	w := c.w
	u, index, err := w.LoadUpload(ctx, c.bucket, c.key, c.id)
	if err != nil {
		var api s3err.APIError
		if errors.As(err, &api) && api.Code == "NoSuchUpload" {
			return c.ended(ctx, err)
		}
		return err
	}
	if u.Claim != "" && u.Claim != c.claim && time.Now().Before(u.ClaimUntil) {
		return waitClaim(ctx, u.ClaimUntil) // another Complete works on it
	}
	parts, err := w.LoadParts(ctx, c.bucket, c.id)
	if err != nil {
		return err
	}
	// part records go only once the upload record has: read while it is
	// still at index, they are the upload's
	if _, now, err := w.kv.Get(ctx, w.uploadKey(c.bucket, c.id)); err != nil {
		return err
	} else if now != index {
		return errRetry
	}
	layout, size, list, err := c.check(parts)
	if err != nil {
		return err
	}
	if u.Claim != c.claim { // claim it (or take over an expired claim)
		u.Claim, u.ClaimUntil = c.claim, time.Now().Add(w.claimTTL())
		data, _ := json.Marshal(u)
		ok, err := w.kv.CAS(ctx, w.uploadKey(c.bucket, c.id), data, index)
		if err != nil || !ok {
			return errRetry // lost the race, or unconfirmed: read again
		}
		return errRetry // read the claimed record (and its index) back
	}
	if err := c.completeNodes(ctx, u, list, size); err != nil {
		c.release(u, index)
		return err
	}
	if time.Now().After(u.ClaimUntil.Add(-w.timeouts.Consul)) {
		u.ClaimUntil = time.Now().Add(w.claimTTL()) // renew before committing
		data, _ := json.Marshal(u)
		if ok, err := w.kv.CAS(ctx, w.uploadKey(c.bucket, c.id), data, index); err != nil || !ok {
			return errRetry
		}
		return errRetry
	}
	e := u.Entry
	e.Size, e.ETag, e.Layout = size, c.etag, layout // Last-Modified stays the initiation time, as in S3
	e.Version = c.claim + u.ID
	for _, n := range u.Nodes {
		e.Replicas = append(e.Replicas, catalog.Replica{Node: n, Name: u.Name})
	}
	return c.commit(ctx, u, index, e, parts)
}

// ended answers a Complete of an upload that is no longer open, from how
// it ended: the same answer as the first Complete when it completed with
// these parts, NoSuchUpload otherwise.
func (c *completion) ended(ctx context.Context, noSuchUpload error) error {
	f, ok, err := c.w.loadFinished(ctx, c.bucket, c.id)
	if err != nil {
		return err
	}
	if ok && !f.Aborted && f.Key == c.key && f.ETag == c.etag {
		return nil
	}
	return noSuchUpload
}

// check matches the client's part list against the parts recorded: each
// part present with its ETag, in ascending order, all but the last at
// least 5 MiB. It returns the object's layout, size and the nodes' list.
func (c *completion) check(parts map[int]part) (integrity.Layout, int64, []minio.CompletePart, error) {
	var layout integrity.Layout
	var size int64
	var list []minio.CompletePart
	last := 0
	for i, p := range c.parts {
		if p.PartNumber == nil || p.ETag == nil {
			return nil, 0, nil, s3err.GetAPIError(s3err.ErrInvalidPart)
		}
		n := int(*p.PartNumber)
		if n <= last {
			return nil, 0, nil, s3err.GetAPIError(s3err.ErrInvalidPartOrder)
		}
		last = n
		rec, ok := parts[n]
		if !ok || strings.Trim(*p.ETag, `"`) != rec.MD5 {
			return nil, 0, nil, s3err.GetAPIError(s3err.ErrInvalidPart)
		}
		if rec.Size < minPart && i < len(c.parts)-1 {
			return nil, 0, nil, s3err.GetAPIError(s3err.ErrEntityTooSmall)
		}
		layout = append(layout, rec.Segment)
		size += rec.Size
		list = append(list, minio.CompletePart{PartNumber: n, ETag: rec.MD5})
	}
	return layout, size, list, nil
}

// completeNodes completes the upload on every node and checks each node's
// object: its size and its multipart ETag (the MD5 of the parts' MD5s).
// A node that already completed it (a Complete before this one, whose
// claim expired) is checked the same way.
func (c *completion) completeNodes(ctx context.Context, u upload, list []minio.CompletePart, size int64) error {
	w := c.w
	errs := make([]error, len(u.Nodes))
	var wg sync.WaitGroup
	for i, n := range u.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.nodes.Call(ctx, n, func(ctx context.Context) error {
				cl := w.nodes.Client(n)
				_, err := cl.CompleteMultipartUpload(ctx, nodes.DataBucket, u.Name, u.NodeIDs[n], list, minio.PutObjectOptions{})
				if err != nil && minio.ToErrorResponse(err).Code != "NoSuchUpload" {
					return err
				}
				info, serr := cl.StatObject(ctx, nodes.DataBucket, u.Name, minio.StatObjectOptions{})
				switch {
				case serr != nil && err != nil:
					return err
				case serr != nil:
					return serr
				case info.Size != size || `"`+strings.Trim(info.ETag, `"`)+`"` != c.etag:
					return errors.New("node " + n + " holds " + u.Name + " as " + info.ETag + ", not " + c.etag)
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if code, ok := clientErrors[minio.ToErrorResponse(err).Code]; ok { // the client's parts are wrong: it is told so
			return s3err.GetAPIError(code)
		}
	}
	if err := errors.Join(errs...); err != nil {
		w.metrics.WriteFailures.Inc()
		w.log.Warn("completing an upload on its nodes failed; the client may retry", "bucket", c.bucket, "key", c.key, "error", err)
		return ErrUnavailable
	}
	return nil
}

// clientErrors are the nodes' answers to a completion that the client's
// part list caused.
var clientErrors = map[string]s3err.ErrorCode{"InvalidPart": s3err.ErrInvalidPart,
	"InvalidPartOrder": s3err.ErrInvalidPartOrder, "EntityTooSmall": s3err.ErrEntityTooSmall}

// release gives up a claim after a failure, so a retry need not wait for
// it to expire (best effort: an unconfirmed release just expires).
func (c *completion) release(u upload, index uint64) {
	u.Claim, u.ClaimUntil = "", time.Time{}
	data, _ := json.Marshal(u)
	ctx, cancel := context.WithTimeout(context.Background(), c.w.timeouts.Consul)
	defer cancel()
	_, _ = c.w.kv.CAS(ctx, c.w.uploadKey(c.bucket, c.id), data, index)
}

// commit writes the entry (check-and-set on the key's current index),
// deletes the upload record at the claimed index and records the end, in
// one transaction.
func (c *completion) commit(ctx context.Context, u upload, index uint64, e catalog.Entry, parts map[int]part) error {
	w := c.w
	held := partBytes(parts)
	f := finished{Key: c.key, ETag: c.etag, Claim: c.claim, Finished: time.Now().UTC()}
	for attempt := 0; attempt < commitAttempts; attempt++ {
		cur, curIndex, err := w.cat.Lookup(ctx, c.bucket, c.key)
		if err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return err
		}
		put, err := w.cat.PutOp(e, curIndex)
		if err != nil {
			return err
		}
		ok, err := w.kv.Txn(ctx, append([]kv.Op{put}, w.finishOps(u, index, f)...))
		if err != nil {
			w.metrics.AmbiguousWrites.Inc()
			ok, err = c.learn(), nil
			if !ok {
				return errRetry // not committed, or another took over: read again
			}
		}
		if ok {
			w.nodes.Commit(u.Nodes, held, e.Size)
			w.superseded(cur, curIndex)
			w.dropParts(c.bucket, c.id, parts)
			w.wrote(e, grid.Placement{Nodes: u.Nodes, Degraded: e.Degraded, Reason: u.Reason})
			return nil
		}
		if _, now, err := w.kv.Get(ctx, w.uploadKey(c.bucket, c.id)); err != nil || now != index {
			return errRetry // the claim was taken over
		}
		// the key changed under us: write over the newer version (last writer wins)
	}
	return errors.New("too many concurrent writes of the key")
}

// learn reads the finished record after an unconfirmed commit: true when
// this Complete's transaction committed.
func (c *completion) learn() bool {
	ctx, cancel := context.WithTimeout(context.Background(), c.w.timeouts.Consul)
	defer cancel()
	f, ok, err := c.w.loadFinished(ctx, c.bucket, c.id)
	return err == nil && ok && f.Claim == c.claim
}

// waitClaim waits a little for another request's claim to end.
func waitClaim(ctx context.Context, until time.Time) error {
	t := time.NewTimer(min(100*time.Millisecond, max(time.Millisecond, time.Until(until))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errRetry
	}
}

// Abort retires the upload id of bucket/key (waiting for a Complete that
// is working on it): an Abort after a Complete answers NoSuchUpload, a
// retried Abort succeeds. Once retired, no entry can ever name its
// replicas, so the nodes' uploads and anything completed of them are
// removed at once. The names must not be buffers a server reuses.
func (w *Writer) Abort(ctx context.Context, bucket, key, id string) error {
	for {
		err := w.abort(ctx, bucket, key, id)
		if !errors.Is(err, errRetry) {
			return err
		}
	}
}

// AbortOnce is one attempt of Abort (the garbage collector's, for an
// upload left open too long): an error, a Complete working on the upload
// among them, leaves it for a later attempt.
func (w *Writer) AbortOnce(ctx context.Context, bucket, key, id string) error {
	return w.abort(ctx, bucket, key, id)
}

func (w *Writer) abort(ctx context.Context, bucket, key, id string) error {
	u, index, err := w.LoadUpload(ctx, bucket, key, id)
	if err != nil {
		var api s3err.APIError
		if errors.As(err, &api) && api.Code == "NoSuchUpload" {
			if f, ok, ferr := w.loadFinished(ctx, bucket, id); ferr == nil && ok && f.Aborted && f.Key == key {
				return nil // a retried Abort
			}
		}
		return err
	}
	if u.Claim != "" && time.Now().Before(u.ClaimUntil) {
		return waitClaim(ctx, u.ClaimUntil)
	}
	ok, err := w.kv.Txn(ctx, w.finishOps(u, index, finished{Key: key, Aborted: true, Finished: time.Now().UTC()}))
	if err != nil {
		w.metrics.AmbiguousWrites.Inc()
		return err // unconfirmed: a retry, or the GC, finishes it
	}
	if !ok {
		return errRetry
	}
	// no part can be recorded any more: read them now
	rctx, cancel := context.WithTimeout(context.Background(), w.timeouts.Consul)
	defer cancel()
	parts, err := w.LoadParts(rctx, bucket, id)
	if err != nil {
		w.log.Warn("an aborted upload's parts could not be read; their bytes stay counted until a restart", "bucket", bucket, "key", key, "error", err)
	}
	w.retired(u, parts)
	return nil
}

// retired cleans up after an upload that ended without an object: its
// nodes' uploads are aborted, what a Complete may have completed of them
// removed (no entry can name it: the upload record is gone and only the
// transaction that deletes it writes such an entry), its parts' bytes
// given back.
func (w *Writer) retired(u upload, parts map[int]part) {
	w.abortOnNodes(u)
	for _, n := range u.Nodes {
		w.removeFresh(n, u.Name)
	}
	w.nodes.Unreserve(u.Nodes, partBytes(parts))
	w.dropParts(u.Entry.Bucket, u.ID, parts)
}
