package front

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
)

// upload is a multipart upload in progress: placed when it starts, each
// part streamed to every replica node's own multipart upload as it comes,
// completed on every node before the catalogue shows the object. Kept in
// Consul KV (blob/uploads/<bucket>/<id>) so any front can continue it.
type upload struct {
	ID        string            `json:"id"`
	Entry     catalog.Entry     `json:"entry"` // what the client declared; no size or ETag yet
	Name      string            `json:"name"`  // the replicas' name on the nodes
	NodeIDs   map[string]string `json:"node_uploads"`
	Nodes     []string          `json:"nodes"` // placement order
	Initiated time.Time         `json:"initiated"`
}

func (b *Backend) uploadKey(bucket, id string) string {
	return b.prefix + "blob/uploads/" + url.PathEscape(bucket) + "/" + id
}

func (b *Backend) loadUpload(ctx context.Context, bucket, key, id string) (upload, error) {
	var u upload
	if strings.ContainsAny(id, "/.") || id == "" {
		return u, b.missing(ctx, bucket, s3err.GetAPIError(s3err.ErrNoSuchUpload))
	}
	data, index, err := b.kv.Get(ctx, b.uploadKey(bucket, id))
	if err != nil {
		return u, err
	}
	if index == 0 {
		return u, b.missing(ctx, bucket, s3err.GetAPIError(s3err.ErrNoSuchUpload))
	}
	if err := json.Unmarshal(data, &u); err != nil {
		return u, &history.CorruptError{Key: b.uploadKey(bucket, id), Err: err}
	}
	if u.Entry.Key != key {
		return u, s3err.GetAPIError(s3err.ErrNoSuchUpload)
	}
	return u, nil
}

// CreateMultipartUpload places the object (its size is not known yet: the
// space is accounted when it completes) and opens an upload on each node.
func (b *Backend) CreateMultipartUpload(ctx context.Context, in s3response.CreateMultipartUploadInput) (s3response.InitiateMultipartUploadResult, error) {
	bucket, key := *in.Bucket, *in.Key
	info, err := b.bucket(ctx, bucket)
	if err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	if err := catalog.ValidateKey(key); err != nil {
		return s3response.InitiateMultipartUploadResult{}, s3err.GetAPIError(s3err.ErrInvalidRequest)
	}
	pol := b.policyOf(info)
	place, err := b.reserve(0, pol.replicas, pol.strict, nil)
	if err != nil {
		b.log.Warn("no placement", "bucket", bucket, "key", key, "error", err)
		return s3response.InitiateMultipartUploadResult{}, s3err.GetAPIError(s3err.ErrSlowDown)
	}
	var id [16]byte
	_, _ = randRead(id[:])
	u := upload{ID: hex.EncodeToString(id[:]), Name: replicaName(bucket, key), Nodes: place.Nodes, NodeIDs: map[string]string{},
		Initiated: time.Now().UTC(),
		Entry: catalog.Entry{Bucket: bucket, Key: key, ContentType: deref(in.ContentType), UserMeta: in.Metadata,
			LastModified: time.Now().UTC().Truncate(time.Second), Degraded: place.Degraded}}
	meta := catalog.Meta(u.Entry)
	for _, n := range place.Nodes {
		nodeUpload, err := b.nodes.client(n).NewMultipartUpload(ctx, DataBucket, u.Name, minio.PutObjectOptions{UserMetadata: meta})
		if err != nil {
			b.log.Warn("opening an upload on a node failed", "node", n, "error", err)
			b.abortOnNodes(u)
			return s3response.InitiateMultipartUploadResult{}, s3err.GetAPIError(s3err.ErrSlowDown)
		}
		u.NodeIDs[n] = nodeUpload
	}
	data, _ := json.Marshal(u)
	if ok, err := b.kv.CAS(ctx, b.uploadKey(bucket, u.ID), data, 0); err != nil || !ok {
		b.abortOnNodes(u)
		if err == nil {
			err = s3err.GetAPIError(s3err.ErrInternalError)
		}
		return s3response.InitiateMultipartUploadResult{}, err
	}
	return s3response.InitiateMultipartUploadResult{Bucket: bucket, Key: key, UploadId: u.ID}, nil
}

// UploadPart streams one part to every node's upload at once.
func (b *Backend) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	u, err := b.loadUpload(ctx, *in.Bucket, *in.Key, *in.UploadId)
	if err != nil {
		return nil, err
	}
	if in.ContentLength == nil {
		return nil, s3err.GetAPIError(s3err.ErrMissingContentLength)
	}
	part := int(*in.PartNumber)
	sum, err := b.writeReplicas(ctx, u.Nodes, in.Body, *in.ContentLength, func(ctx context.Context, node string, r io.Reader) error {
		_, err := b.nodes.client(node).PutObjectPart(ctx, DataBucket, u.Name, u.NodeIDs[node], part, r, *in.ContentLength,
			minio.PutObjectPartOptions{DisableContentSha256: true})
		return err
	}, func(string) {}) // a part written to some nodes only is overwritten by the client's retry
	if err != nil {
		return nil, err
	}
	return &s3.UploadPartOutput{ETag: ptr(`"` + hex.EncodeToString(sum) + `"`)}, nil
}

// CompleteMultipartUpload completes the upload on every node, then records
// the object. If any node fails, the upload is undone everywhere: nothing
// partial becomes visible.
func (b *Backend) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput) (s3response.CompleteMultipartUploadResult, string, error) {
	var out s3response.CompleteMultipartUploadResult
	u, err := b.loadUpload(ctx, *in.Bucket, *in.Key, *in.UploadId)
	if err != nil {
		return out, "", err
	}
	if in.MultipartUpload == nil || len(in.MultipartUpload.Parts) == 0 {
		return out, "", s3err.GetAPIError(s3err.ErrMalformedXML)
	}
	parts := make([]minio.CompletePart, 0, len(in.MultipartUpload.Parts))
	for _, p := range in.MultipartUpload.Parts {
		if p.PartNumber == nil || p.ETag == nil {
			return out, "", s3err.GetAPIError(s3err.ErrInvalidPart)
		}
		parts = append(parts, minio.CompletePart{PartNumber: int(*p.PartNumber), ETag: strings.Trim(*p.ETag, `"`)})
	}
	etag, err := backend.ComputeMultipartETagFromPartETags(in.MultipartUpload.Parts)
	if err != nil {
		return out, "", err
	}
	errs := make([]error, len(u.Nodes))
	var wg sync.WaitGroup
	for i, n := range u.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.nodes.client(n).CompleteMultipartUpload(ctx, DataBucket, u.Name, u.NodeIDs[n], parts, minio.PutObjectOptions{})
		}()
	}
	wg.Wait()
	var size int64
	if err = errors.Join(errs...); err == nil {
		var info minio.ObjectInfo
		info, err = b.nodes.client(u.Nodes[0]).StatObject(ctx, DataBucket, u.Name, minio.StatObjectOptions{})
		size = info.Size
	}
	if err != nil {
		if code, ok := clientErrors[minio.ToErrorResponse(err).Code]; ok { // the client's parts are wrong: it is told so
			return out, "", s3err.GetAPIError(code)
		}
		b.log.Warn("completing an upload failed; undoing it", "bucket", u.Entry.Bucket, "key", u.Entry.Key, "error", err)
		b.metrics.writeFailures.Inc()
		b.discardUpload(u)
		return out, "", s3err.GetAPIError(s3err.ErrSlowDown)
	}
	e := u.Entry
	e.Size, e.ETag = size, etag // Last-Modified stays the initiation time, as in S3
	place := grid.Placement{Nodes: u.Nodes, Degraded: e.Degraded}
	b.commit(place, size)
	if err := b.record(ctx, e, place, u.Name); err != nil {
		return out, "", err
	}
	_ = b.kv.Delete(ctx, b.uploadKey(u.Entry.Bucket, u.ID))
	return s3response.CompleteMultipartUploadResult{Bucket: &e.Bucket, Key: &e.Key, ETag: &etag}, "", nil
}

// clientErrors are the nodes' answers to a completion that the client's
// part list caused.
var clientErrors = map[string]s3err.ErrorCode{"InvalidPart": s3err.ErrInvalidPart,
	"InvalidPartOrder": s3err.ErrInvalidPartOrder, "EntityTooSmall": s3err.ErrEntityTooSmall}

// AbortMultipartUpload drops the upload on every node.
func (b *Backend) AbortMultipartUpload(ctx context.Context, in *s3.AbortMultipartUploadInput) error {
	u, err := b.loadUpload(ctx, *in.Bucket, *in.Key, *in.UploadId)
	if err != nil {
		return err
	}
	b.discardUpload(u)
	return nil
}

// discardUpload aborts the nodes' uploads, removes what completed and
// forgets the upload.
func (b *Backend) discardUpload(u upload) {
	b.abortOnNodes(u)
	for _, n := range u.Nodes {
		b.removeObject(n, u.Name)
	}
	_ = b.kv.Delete(context.Background(), b.uploadKey(u.Entry.Bucket, u.ID))
}

func (b *Backend) abortOnNodes(u upload) {
	for n, id := range u.NodeIDs {
		_ = b.nodes.client(n).AbortMultipartUpload(context.Background(), DataBucket, u.Name, id)
	}
}

// ListParts lists the parts the first replica node holds.
func (b *Backend) ListParts(ctx context.Context, in *s3.ListPartsInput) (s3response.ListPartsResult, error) {
	u, err := b.loadUpload(ctx, *in.Bucket, *in.Key, *in.UploadId)
	if err != nil {
		return s3response.ListPartsResult{}, err
	}
	marker, maxParts := 0, 1000
	if in.PartNumberMarker != nil {
		marker, _ = strconv.Atoi(*in.PartNumberMarker)
	}
	if in.MaxParts != nil && *in.MaxParts > 0 {
		maxParts = int(*in.MaxParts)
	}
	res, err := b.nodes.client(u.Nodes[0]).ListObjectParts(ctx, DataBucket, u.Name, u.NodeIDs[u.Nodes[0]], marker, maxParts)
	if err != nil {
		return s3response.ListPartsResult{}, s3err.GetAPIError(s3err.ErrSlowDown)
	}
	out := s3response.ListPartsResult{Bucket: u.Entry.Bucket, Key: u.Entry.Key, UploadID: u.ID, PartNumberMarker: marker,
		NextPartNumberMarker: res.NextPartNumberMarker, MaxParts: maxParts, IsTruncated: res.IsTruncated}
	for _, p := range res.ObjectParts {
		out.Parts = append(out.Parts, s3response.Part{PartNumber: p.PartNumber, LastModified: p.LastModified,
			ETag: `"` + strings.Trim(p.ETag, `"`) + `"`, Size: p.Size})
	}
	return out, nil
}

// ListMultipartUploads lists the uploads in progress in a bucket.
func (b *Backend) ListMultipartUploads(ctx context.Context, in *s3.ListMultipartUploadsInput) (s3response.ListMultipartUploadsResult, error) {
	bucket := *in.Bucket
	if _, err := b.bucket(ctx, bucket); err != nil {
		return s3response.ListMultipartUploadsResult{}, err
	}
	pairs, err := b.kv.List(ctx, b.uploadKey(bucket, ""))
	if err != nil {
		return s3response.ListMultipartUploadsResult{}, err
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
