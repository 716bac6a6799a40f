package front

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/storage/catalog"
)

// The multipart requests. The upload, part and finished records, the
// claims and the transactions that complete or abort an upload are the
// write path's (storage/objects: multipart.go, uploads.go, complete.go).

// CreateMultipartUpload places the object (its size is not known yet: each
// part's bytes are reserved on the nodes when it arrives; the nodes must
// have room for one part now) and opens an upload on each node.
func (b *Backend) CreateMultipartUpload(ctx context.Context, in s3response.CreateMultipartUploadInput) (s3response.InitiateMultipartUploadResult, error) {
	req := b.request(ctx)
	defer req.cancel()
	out, err := b.createUpload(req.ctx, in)
	return out, b.fail("create multipart upload", err)
}

func (b *Backend) createUpload(ctx context.Context, in s3response.CreateMultipartUploadInput) (s3response.InitiateMultipartUploadResult, error) {
	bucket, key := *in.Bucket, *in.Key
	info, err := b.bucket(ctx, bucket)
	if err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	if err := catalog.ValidateKey(key); err != nil {
		return s3response.InitiateMultipartUploadResult{}, s3err.GetAPIError(s3err.ErrInvalidRequest)
	}
	e := catalog.Entry{Bucket: bucket, Key: key, ContentType: deref(in.ContentType), UserMeta: in.Metadata,
		LastModified: time.Now().UTC().Truncate(time.Second)}
	id, err := b.objects.CreateUpload(ctx, e, b.policyOf(info).placement())
	if err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	return s3response.InitiateMultipartUploadResult{Bucket: bucket, Key: key, UploadId: id}, nil
}

// UploadPart reserves the part's bytes on every node of the upload (a full
// node refuses the part with XMinioStorageFull), streams it to every node's
// upload at once, and records it while the upload is still open.
func (b *Backend) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	req := b.request(ctx)
	defer req.cancel()
	out, err := b.uploadPart(req, in)
	return out, b.fail("upload part", err)
}

func (b *Backend) uploadPart(req *request, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	ctx := req.ctx
	u, index, err := b.objects.LoadUpload(ctx, *in.Bucket, *in.Key, *in.UploadId)
	if err != nil {
		return nil, err
	}
	if u.Claim != "" {
		return nil, s3err.GetAPIError(s3err.ErrNoSuchUpload) // being completed
	}
	if in.ContentLength == nil {
		return nil, s3err.GetAPIError(s3err.ErrMissingContentLength)
	}
	size, number := *in.ContentLength, int(*in.PartNumber)
	if !b.nodes.Reserve(u.Nodes, size) {
		req.drain(in.Body, size)
		b.metrics.storageFull.Inc()
		b.log.Warn("a part refused: storage full", "bucket", u.Entry.Bucket, "key", u.Entry.Key, "part", number, "bytes", size)
		return nil, errPartStorageFull(size)
	}
	body, recorded, err := clientSums(req.body(in.Body), sdkSum{"CRC32", in.ChecksumCRC32}, sdkSum{"CRC32C", in.ChecksumCRC32C},
		sdkSum{"SHA1", in.ChecksumSHA1}, sdkSum{"SHA256", in.ChecksumSHA256}, sdkSum{"CRC64NVME", in.ChecksumCRC64NVME})
	if err != nil {
		b.nodes.Unreserve(u.Nodes, size)
		return nil, err
	}
	pt, err := b.objects.WritePart(ctx, u, index, number, size, body, recorded)
	if err != nil {
		return nil, err
	}
	out := &s3.UploadPartOutput{ETag: ptr(`"` + pt.MD5 + `"`)}
	checksumFields(pt.Checksum, &out.ChecksumCRC32, &out.ChecksumCRC32C, &out.ChecksumSHA1, &out.ChecksumSHA256, &out.ChecksumCRC64NVME)
	return out, nil
}

// ListParts lists the parts recorded.
func (b *Backend) ListParts(ctx context.Context, in *s3.ListPartsInput) (s3response.ListPartsResult, error) {
	req := b.request(ctx)
	defer req.cancel()
	u, _, err := b.objects.LoadUpload(req.ctx, *in.Bucket, *in.Key, *in.UploadId)
	if err != nil {
		return s3response.ListPartsResult{}, b.fail("list parts", err)
	}
	parts, err := b.objects.LoadParts(req.ctx, u.Entry.Bucket, u.ID)
	if err != nil {
		return s3response.ListPartsResult{}, b.fail("list parts", err)
	}
	marker, maxParts := 0, 1000
	if in.PartNumberMarker != nil {
		marker, _ = strconv.Atoi(*in.PartNumberMarker)
	}
	if in.MaxParts != nil && *in.MaxParts > 0 {
		maxParts = int(*in.MaxParts)
	}
	numbers := make([]int, 0, len(parts))
	for n := range parts {
		if n > marker {
			numbers = append(numbers, n)
		}
	}
	sort.Ints(numbers)
	out := s3response.ListPartsResult{Bucket: u.Entry.Bucket, Key: u.Entry.Key, UploadID: u.ID, PartNumberMarker: marker, MaxParts: maxParts}
	if len(numbers) > maxParts {
		numbers, out.IsTruncated = numbers[:maxParts], true
	}
	for _, n := range numbers {
		p := parts[n]
		out.Parts = append(out.Parts, s3response.Part{PartNumber: n, LastModified: p.Written, ETag: `"` + p.MD5 + `"`, Size: p.Size})
		out.NextPartNumberMarker = n
	}
	return out, nil
}

// ListMultipartUploads lists the uploads in progress in a bucket.
func (b *Backend) ListMultipartUploads(ctx context.Context, in *s3.ListMultipartUploadsInput) (s3response.ListMultipartUploadsResult, error) {
	req := b.request(ctx)
	defer req.cancel()
	bucket := *in.Bucket
	if _, err := b.bucket(req.ctx, bucket); err != nil {
		return s3response.ListMultipartUploadsResult{}, b.fail("list uploads", err)
	}
	uploads, err := b.objects.Uploads(req.ctx, bucket)
	if err != nil {
		return s3response.ListMultipartUploadsResult{}, b.fail("list uploads", err)
	}
	out := s3response.ListMultipartUploadsResult{Bucket: bucket, Prefix: deref(in.Prefix), MaxUploads: 1000}
	for _, u := range uploads {
		if !strings.HasPrefix(u.Entry.Key, out.Prefix) {
			continue
		}
		out.Uploads = append(out.Uploads, s3response.Upload{Key: u.Entry.Key, UploadID: u.ID, Initiated: u.Initiated})
	}
	sort.Slice(out.Uploads, func(i, j int) bool { return out.Uploads[i].Key < out.Uploads[j].Key })
	return out, nil
}

// CompleteMultipartUpload claims the upload, completes it on every node,
// checks what each node made of it, then writes the entry and retires the
// upload in one transaction (objects.Writer.Complete). A retried Complete
// of an upload completed with the same parts answers as the first did.
func (b *Backend) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput) (s3response.CompleteMultipartUploadResult, string, error) {
	req := b.request(ctx)
	defer req.cancel()
	var out s3response.CompleteMultipartUploadResult
	if in.MultipartUpload == nil || len(in.MultipartUpload.Parts) == 0 {
		return out, "", s3err.GetAPIError(s3err.ErrMalformedXML)
	}
	etag, err := backend.ComputeMultipartETagFromPartETags(in.MultipartUpload.Parts)
	if err != nil {
		return out, "", err
	}
	// fasthttp reuses the request's buffers once it ends: the names are
	// cloned, since the upload's clean-up outlives the request
	bucket, key, id := strings.Clone(*in.Bucket), strings.Clone(*in.Key), strings.Clone(*in.UploadId)
	if err := b.objects.Complete(req.ctx, bucket, key, id, etag, in.MultipartUpload.Parts); err != nil {
		return out, "", b.fail("complete multipart upload", err)
	}
	return s3response.CompleteMultipartUploadResult{Bucket: &bucket, Key: &key, ETag: &etag}, "", nil
}

// AbortMultipartUpload retires the upload (waiting for a Complete that is
// working on it): an Abort after a Complete answers NoSuchUpload, a retried
// Abort succeeds. Once retired, no entry can ever name its replicas, so
// the nodes' uploads and anything completed of them are removed at once.
func (b *Backend) AbortMultipartUpload(ctx context.Context, in *s3.AbortMultipartUploadInput) error {
	req := b.request(ctx)
	defer req.cancel()
	bucket, key, id := strings.Clone(*in.Bucket), strings.Clone(*in.Key), strings.Clone(*in.UploadId)
	return b.fail("abort multipart upload", b.objects.Abort(req.ctx, bucket, key, id))
}
