package front

import (
	"context"
	"crypto/rand"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/storage/catalog"
)

var randRead = rand.Read

// listing is one page of keys and common prefixes.
type listing struct {
	objects   []s3response.Object
	prefixes  []types.CommonPrefix
	truncated bool
	next      string // the last key or prefix of the page
}

// list pages through a bucket as S3 does: keys after marker that start with
// prefix; with a delimiter, keys sharing the part up to it roll up into one
// common prefix; at most max entries (keys and prefixes) a page. It reads
// the matching keys without their entries, then only the entries of the
// page's objects (an object deleted in between is left out of the page).
func (b *Backend) list(ctx context.Context, bucket, prefix, delimiter, marker string, max int) (listing, error) {
	if max <= 0 {
		max = 1000
	}
	keys, err := b.cat.Keys(ctx, bucket, prefix, marker)
	if err == nil && len(keys) == 0 {
		err = b.missing(ctx, bucket, nil) // an empty page: say so if the bucket is gone
	}
	if err != nil {
		return listing{}, err
	}
	var out listing
	var page []string
	seen := map[string]bool{}
	for _, key := range keys {
		if delimiter != "" {
			if i := strings.Index(key[len(prefix):], delimiter); i >= 0 {
				cp := key[:len(prefix)+i+len(delimiter)]
				if seen[cp] || cp <= marker {
					continue
				}
				if len(page)+len(out.prefixes) == max {
					out.truncated = true
					break
				}
				seen[cp] = true
				out.prefixes = append(out.prefixes, types.CommonPrefix{Prefix: ptr(cp)})
				out.next = cp
				continue
			}
		}
		if len(page)+len(out.prefixes) == max {
			out.truncated = true
			break
		}
		page = append(page, key)
		out.next = key
	}
	entries, err := b.cat.Entries(ctx, bucket, page)
	if err != nil {
		return listing{}, err
	}
	for _, e := range entries {
		out.objects = append(out.objects, object(e))
	}
	return out, nil
}

func object(e catalog.Entry) s3response.Object {
	lm := e.LastModified
	size := e.Size
	return s3response.Object{Key: ptr(e.Key), ETag: ptr(e.ETag), Size: &size, LastModified: &lm, StorageClass: types.ObjectStorageClassStandard}
}

func (b *Backend) ListObjects(ctx context.Context, in *s3.ListObjectsInput) (s3response.ListObjectsResult, error) {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	max := maxKeys(in.MaxKeys)
	l, err := b.list(ctx, *in.Bucket, deref(in.Prefix), deref(in.Delimiter), deref(in.Marker), max)
	if err != nil {
		return s3response.ListObjectsResult{}, err
	}
	res := s3response.ListObjectsResult{Name: in.Bucket, Prefix: in.Prefix, Marker: in.Marker, Delimiter: in.Delimiter,
		MaxKeys: ptr(int32(max)), IsTruncated: &l.truncated, Contents: l.objects, CommonPrefixes: l.prefixes}
	if l.truncated {
		res.NextMarker = ptr(l.next)
	}
	return res, nil
}

func (b *Backend) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input) (s3response.ListObjectsV2Result, error) {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	max := maxKeys(in.MaxKeys)
	marker := deref(in.StartAfter)
	if t := deref(in.ContinuationToken); t != "" {
		marker = t
	}
	l, err := b.list(ctx, *in.Bucket, deref(in.Prefix), deref(in.Delimiter), marker, max)
	if err != nil {
		return s3response.ListObjectsV2Result{}, err
	}
	res := s3response.ListObjectsV2Result{Name: in.Bucket, Prefix: in.Prefix, StartAfter: in.StartAfter, ContinuationToken: in.ContinuationToken,
		Delimiter: in.Delimiter, MaxKeys: ptr(int32(max)), IsTruncated: &l.truncated, Contents: l.objects, CommonPrefixes: l.prefixes,
		KeyCount: ptr(int32(len(l.objects) + len(l.prefixes)))}
	if l.truncated {
		res.NextContinuationToken = ptr(l.next)
	}
	return res, nil
}

// maxKeys is a listing's MaxKeys, S3's 1000 when the request names none.
func maxKeys(n *int32) int {
	if n == nil {
		return 1000
	}
	return int(*n)
}
