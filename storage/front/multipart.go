package front

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// minPart is the smallest part a multipart upload must have room for when
// it starts (S3's minimum part size).
const minPart = 5 << 20

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
	place, err := b.place(e, minPart, b.policyOf(info), nil)
	if err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	b.nodes.Unreserve(place.Nodes, minPart) // only a check: parts reserve their own bytes
	var id [16]byte
	_, _ = randRead(id[:])
	e.Degraded = place.Degraded
	u := upload{ID: hex.EncodeToString(id[:]), Name: b.replicaName(bucket, key), Nodes: place.Nodes, NodeIDs: map[string]string{},
		Initiated: time.Now().UTC(), Entry: e, Reason: place.Reason}
	meta := catalog.Meta(u.Entry)
	for _, n := range place.Nodes {
		var nodeUpload string
		err := b.nodes.Call(ctx, n, func(ctx context.Context) (err error) {
			nodeUpload, err = b.nodes.Client(n).NewMultipartUpload(ctx, DataBucket, u.Name, minio.PutObjectOptions{UserMetadata: meta})
			return err
		})
		if err != nil {
			b.log.Warn("opening an upload on a node failed", "node", n, "error", err)
			b.abortOnNodes(u)
			if minio.ToErrorResponse(err).Code == "MetadataTooLarge" {
				return s3response.InitiateMultipartUploadResult{}, s3err.GetAPIError(s3err.ErrMetadataTooLarge)
			}
			return s3response.InitiateMultipartUploadResult{}, errUnavailable
		}
		u.NodeIDs[n] = nodeUpload
	}
	data, _ := json.Marshal(u)
	if ok, err := b.kv.CAS(ctx, b.uploadKey(bucket, u.ID), data, 0); err != nil || !ok {
		if err == nil { // an ID drawn twice: nothing of this upload is recorded
			b.abortOnNodes(u)
			err = errors.New("upload ID collision")
		}
		// unconfirmed: the nodes' uploads are the GC's (it aborts those no
		// upload record names)
		return s3response.InitiateMultipartUploadResult{}, err
	}
	return s3response.InitiateMultipartUploadResult{Bucket: bucket, Key: key, UploadId: u.ID}, nil
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
	u, index, err := b.loadUpload(ctx, *in.Bucket, *in.Key, *in.UploadId)
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
	res, err := b.writeReplicas(ctx, u.Nodes, body, size, func(ctx context.Context, node string, r io.Reader) (string, error) {
		p, err := b.nodes.Client(node).PutObjectPart(ctx, DataBucket, u.Name, u.NodeIDs[node], number, r, size,
			minio.PutObjectPartOptions{DisableContentSha256: true})
		return p.ETag, err
	}, func(string) {}) // a part written to some nodes only is overwritten by the client's retry
	if err != nil {
		b.nodes.Unreserve(u.Nodes, size)
		return nil, err
	}
	pt := part{Number: number, Size: size, MD5: hex.EncodeToString(res.md5), Segment: res.segment, Checksum: recorded(), Written: time.Now().UTC()}
	if err := b.recordPart(ctx, u, index, pt); err != nil {
		b.nodes.Unreserve(u.Nodes, size)
		return nil, err
	}
	out := &s3.UploadPartOutput{ETag: ptr(`"` + pt.MD5 + `"`)}
	checksumFields(pt.Checksum, &out.ChecksumCRC32, &out.ChecksumCRC32C, &out.ChecksumSHA1, &out.ChecksumSHA256, &out.ChecksumCRC64NVME)
	return out, nil
}

// recordPart writes a part record while the upload record is still at
// index (open, unclaimed); a part that replaces one of the same number
// gives the old one's bytes back.
func (b *Backend) recordPart(ctx context.Context, u upload, index uint64, pt part) error {
	key := b.partKey(u.Entry.Bucket, u.ID, pt.Number)
	old, oldIndex, err := b.kv.Get(ctx, key)
	if err != nil {
		return err
	}
	data, _ := json.Marshal(pt)
	ok, err := b.kv.Txn(ctx, []kv.Op{{Verb: kv.CheckIndex, Key: b.uploadKey(u.Entry.Bucket, u.ID), Index: index},
		{Verb: kv.CAS, Key: key, Value: data, Index: oldIndex}})
	if err != nil { // unconfirmed: read back
		rctx, cancel := context.WithTimeout(context.Background(), b.timeouts.Consul)
		defer cancel()
		got, _, rerr := b.kv.Get(rctx, key)
		if rerr != nil || string(got) != string(data) {
			return err
		}
		ok = true
	}
	if !ok {
		// claimed, aborted, or the same part written twice at once: the
		// client is told the upload is not open for it
		return s3err.GetAPIError(s3err.ErrNoSuchUpload)
	}
	var prev part
	if oldIndex != 0 && json.Unmarshal(old, &prev) == nil {
		b.nodes.Unreserve(u.Nodes, prev.Size)
	}
	return nil
}

// ListParts lists the parts recorded.
func (b *Backend) ListParts(ctx context.Context, in *s3.ListPartsInput) (s3response.ListPartsResult, error) {
	req := b.request(ctx)
	defer req.cancel()
	u, _, err := b.loadUpload(req.ctx, *in.Bucket, *in.Key, *in.UploadId)
	if err != nil {
		return s3response.ListPartsResult{}, b.fail("list parts", err)
	}
	parts, err := b.loadParts(req.ctx, u.Entry.Bucket, u.ID)
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
	pairs, err := b.kv.List(req.ctx, b.uploadKey(bucket, ""))
	if err != nil {
		return s3response.ListMultipartUploadsResult{}, b.fail("list uploads", err)
	}
	out := s3response.ListMultipartUploadsResult{Bucket: bucket, Prefix: deref(in.Prefix), MaxUploads: 1000}
	for _, p := range pairs {
		var u upload
		if json.Unmarshal(p.Value, &u) != nil || !strings.HasPrefix(u.Entry.Key, out.Prefix) {
			continue
		}
		out.Uploads = append(out.Uploads, s3response.Upload{Key: u.Entry.Key, UploadID: u.ID, Initiated: u.Initiated})
	}
	sort.Slice(out.Uploads, func(i, j int) bool { return out.Uploads[i].Key < out.Uploads[j].Key })
	return out, nil
}

// abortOnNodes drops the nodes' uploads of u, in the background.
func (b *Backend) abortOnNodes(u upload) {
	for n, id := range u.NodeIDs {
		go func() {
			_ = b.nodes.Call(context.Background(), n, func(ctx context.Context) error {
				return b.nodes.Client(n).AbortMultipartUpload(ctx, DataBucket, u.Name, id)
			})
		}()
	}
}
