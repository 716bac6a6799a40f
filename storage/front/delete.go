package front

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

// DeleteObject removes the catalogue entry with check-and-set, leaving a
// tombstone in the same transaction; its replicas become orphans, which
// the garbage collector deletes after its grace (objects.Writer.Delete).
func (b *Backend) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput) (*s3.DeleteObjectOutput, error) {
	req := b.request(ctx)
	defer req.cancel()
	if err := b.objects.Delete(req.ctx, *in.Bucket, *in.Key); err != nil {
		return nil, b.fail("delete", err)
	}
	return &s3.DeleteObjectOutput{}, nil
}

// DeleteObjects deletes each key in turn (aws s3 rm --recursive, rclone
// purge); a key that fails is reported with its S3 error code and message,
// never with internal detail.
func (b *Backend) DeleteObjects(ctx context.Context, in *s3.DeleteObjectsInput) (s3response.DeleteResult, error) {
	req := b.request(ctx)
	defer req.cancel()
	var out s3response.DeleteResult
	if in.Delete == nil {
		return out, s3err.GetAPIError(s3err.ErrMalformedXML)
	}
	for _, o := range in.Delete.Objects {
		if o.Key == nil {
			continue
		}
		if err := b.fail("delete", b.objects.Delete(req.ctx, *in.Bucket, *o.Key)); err != nil {
			var api s3err.APIError
			if !errors.As(err, &api) {
				api = s3err.GetAPIError(s3err.ErrInternalError)
			}
			out.Error = append(out.Error, types.Error{Key: o.Key, Code: ptr(api.Code), Message: ptr(api.Description)})
			continue
		}
		out.Deleted = append(out.Deleted, types.DeletedObject{Key: o.Key})
	}
	return out, nil
}
