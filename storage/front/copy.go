package front

import (
	"context"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/storage/catalog"
)

// CopyObject copies through the front (S3 has no copy between servers): the
// source is read from a live replica and written as a new object placed by
// Algorithm 2. A copy onto itself with REPLACE only rewrites the metadata
// the catalogue serves (s3cmd modify, aws s3 cp --metadata-directive).
func (b *Backend) CopyObject(ctx context.Context, in s3response.CopyObjectInput) (s3response.CopyObjectOutput, error) {
	srcBucket, srcKey, _, err := backend.ParseCopySource(deref(in.CopySource))
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	src, err := b.entry(ctx, srcBucket, srcKey)
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	dstInfo, err := b.bucket(ctx, *in.Bucket)
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	if err := backend.EvaluatePreconditions(src.ETag, src.LastModified, backend.PreConditions{
		IfMatch: in.CopySourceIfMatch, IfNoneMatch: in.CopySourceIfNoneMatch,
		IfModSince: in.CopySourceIfModifiedSince, IfUnmodeSince: in.CopySourceIfUnmodifiedSince}); err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	dst := catalog.Entry{Bucket: *in.Bucket, Key: *in.Key, Size: src.Size, ContentType: src.ContentType, UserMeta: src.UserMeta}
	if in.MetadataDirective == types.MetadataDirectiveReplace {
		dst.UserMeta, dst.ContentType = in.Metadata, deref(in.ContentType)
	}
	if err := catalog.ValidateKey(dst.Key); err != nil {
		return s3response.CopyObjectOutput{}, s3err.GetAPIError(s3err.ErrInvalidRequest)
	}
	if srcBucket == dst.Bucket && srcKey == dst.Key {
		if in.MetadataDirective != types.MetadataDirectiveReplace {
			return s3response.CopyObjectOutput{}, s3err.GetAPIError(s3err.ErrInvalidCopyDest)
		}
		src.UserMeta, src.ContentType = dst.UserMeta, dst.ContentType
		if _, err := b.cat.Put(ctx, src); err != nil {
			return s3response.CopyObjectOutput{}, err
		}
		return copyResult(src), nil
	}
	body, err := b.openReplica(ctx, src, 0, src.Size)
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	defer body.Close()
	dst, err = b.store(ctx, dst, body, b.policyOf(dstInfo))
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	return copyResult(dst), nil
}

func copyResult(e catalog.Entry) s3response.CopyObjectOutput {
	return s3response.CopyObjectOutput{CopyObjectResult: &s3response.CopyObjectResult{ETag: &e.ETag, LastModified: &e.LastModified}}
}

// openReplica reads length bytes from start of a replica whose node is up
// and not busy, the least loaded (reads in flight through this front)
// first; SlowDown when there is none.
func (b *Backend) openReplica(ctx context.Context, e catalog.Entry, start, length int64) (io.ReadCloser, error) {
	var candidates []catalog.Replica
	for _, r := range e.Replicas {
		if b.nodes.client(r.Node) == nil || !b.nodes.Up(r.Node) {
			continue
		}
		if b.nodes.Busy(r.Node) {
			b.metrics.busyDenials.Inc()
			continue
		}
		candidates = append(candidates, r)
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		return b.nodes.inflight(candidates[i].Node) < b.nodes.inflight(candidates[j].Node)
	})
	for _, r := range candidates {
		opts := minio.GetObjectOptions{}
		if length > 0 && (start > 0 || length < e.Size) {
			_ = opts.SetRange(start, start+length-1)
		}
		done := b.nodes.startRead(r.Node)
		body, _, _, err := b.nodes.client(r.Node).GetObject(ctx, DataBucket, r.Name, opts)
		if err != nil {
			done()
			b.log.Warn("replica unreadable; trying the next", "node", r.Node, "name", r.Name, "error", err)
			continue
		}
		return bigChunks{&countedBody{ReadCloser: body, done: done}}, nil
	}
	b.metrics.readFailures.Inc()
	return nil, s3err.GetAPIError(s3err.ErrSlowDown)
}

// countedBody ends a node's in-flight read when the body is closed.
type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (c *countedBody) Close() error {
	c.once.Do(c.done)
	return c.ReadCloser.Close()
}

// DeleteObjects deletes each key in turn (aws s3 rm --recursive, rclone purge).
func (b *Backend) DeleteObjects(ctx context.Context, in *s3.DeleteObjectsInput) (s3response.DeleteResult, error) {
	var out s3response.DeleteResult
	if in.Delete == nil {
		return out, s3err.GetAPIError(s3err.ErrMalformedXML)
	}
	for _, o := range in.Delete.Objects {
		if o.Key == nil {
			continue
		}
		if _, err := b.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: in.Bucket, Key: o.Key}); err != nil {
			out.Error = append(out.Error, types.Error{Key: o.Key, Code: ptr("InternalError"), Message: ptr(err.Error())})
			continue
		}
		out.Deleted = append(out.Deleted, types.DeletedObject{Key: o.Key})
	}
	return out, nil
}

// GetObjectAcl answers that the bucket's owner has full control: objects
// carry no ACLs of their own (s3cmd and rclone ask).
func (b *Backend) GetObjectAcl(ctx context.Context, in *s3.GetObjectAclInput) (*s3.GetObjectAclOutput, error) {
	info, err := b.bucket(ctx, *in.Bucket)
	if err != nil {
		return nil, err
	}
	if _, err := b.entry(ctx, *in.Bucket, *in.Key); err != nil {
		return nil, err
	}
	var acl struct{ Owner string }
	_ = json.Unmarshal(info.ACL, &acl)
	owner := &types.Owner{ID: &acl.Owner}
	return &s3.GetObjectAclOutput{Owner: owner, Grants: []types.Grant{{
		Grantee:    &types.Grantee{ID: &acl.Owner, Type: types.TypeCanonicalUser},
		Permission: types.PermissionFullControl}}}, nil
}

// PutObjectAcl accepts the owner-only ACLs clients set and refuses others.
func (b *Backend) PutObjectAcl(ctx context.Context, in *s3.PutObjectAclInput) error {
	if _, err := b.entry(ctx, *in.Bucket, *in.Key); err != nil {
		return err
	}
	if in.ACL != "" && in.ACL != types.ObjectCannedACLPrivate && in.ACL != types.ObjectCannedACLBucketOwnerFullControl {
		return s3err.GetAPIError(s3err.ErrNotImplemented)
	}
	for _, g := range []*string{in.GrantRead, in.GrantWrite, in.GrantReadACP} {
		if g != nil && strings.TrimSpace(*g) != "" {
			return s3err.GetAPIError(s3err.ErrNotImplemented)
		}
	}
	return nil
}

// GetBucketVersioning answers "never enabled" (rclone purge asks).
func (b *Backend) GetBucketVersioning(ctx context.Context, bucket string) (s3response.GetBucketVersioningOutput, error) {
	if _, err := b.bucket(ctx, bucket); err != nil {
		return s3response.GetBucketVersioningOutput{}, err
	}
	return s3response.GetBucketVersioningOutput{}, nil
}

// bigChunks hands a replica's body to the S3 server in 1 MiB writes: the
// server copies a body that is an io.WriterTo through WriteTo, and large
// writes go straight to the socket instead of through its 4 KiB buffer.
type bigChunks struct{ io.ReadCloser }

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

func (c bigChunks) WriteTo(w io.Writer) (int64, error) {
	buf := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(buf)
	return io.CopyBuffer(onlyWriter{w}, onlyReader{c.ReadCloser}, *buf)
}

// onlyWriter and onlyReader hide ReadFrom/WriteTo so CopyBuffer uses the buffer.
type onlyWriter struct{ io.Writer }
type onlyReader struct{ io.Reader }
