package front

import (
	"context"
	"errors"

	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/objects"
)

// PutObject streams the body to R nodes at once (placed by Algorithm 2),
// checking the client's checksum and recording block checksums, and
// records the object in the catalogue only when every replica is written:
// a failed write leaves nothing visible (objects.Writer.Store).
func (b *Backend) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	req := b.request(ctx)
	defer req.cancel()
	bucket, key := *in.Bucket, *in.Key
	info, err := b.bucket(req.ctx, bucket)
	if err != nil {
		return s3response.PutObjectOutput{}, b.fail("put", err)
	}
	if err := catalog.ValidateKey(key); err != nil {
		return s3response.PutObjectOutput{}, s3err.GetAPIError(s3err.ErrInvalidRequest)
	}
	if in.ContentLength == nil {
		return s3response.PutObjectOutput{}, s3err.GetAPIError(s3err.ErrMissingContentLength)
	}
	body, recorded, err := clientSums(req.body(in.Body), sdkSum{"CRC32", in.ChecksumCRC32}, sdkSum{"CRC32C", in.ChecksumCRC32C},
		sdkSum{"SHA1", in.ChecksumSHA1}, sdkSum{"SHA256", in.ChecksumSHA256}, sdkSum{"CRC64NVME", in.ChecksumCRC64NVME})
	if err != nil {
		return s3response.PutObjectOutput{}, err
	}
	entry := catalog.Entry{Bucket: bucket, Key: key, Size: *in.ContentLength,
		ContentType: deref(in.ContentType), UserMeta: in.Metadata}
	entry, err = b.objects.Store(req.ctx, entry, body, b.policyOf(info).placement(), recorded)
	if errors.Is(err, objects.ErrRefused) {
		req.drain(body, *in.ContentLength)
	}
	if err != nil {
		return s3response.PutObjectOutput{}, b.fail("put", err)
	}
	out := s3response.PutObjectOutput{ETag: entry.ETag, Size: &entry.Size}
	checksumFields(entry.Checksum, &out.ChecksumCRC32, &out.ChecksumCRC32C, &out.ChecksumSHA1, &out.ChecksumSHA256, &out.ChecksumCRC64NVME)
	return out, nil
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
