package front

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
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
	req := b.request(ctx)
	defer req.cancel()
	out, err := b.copyObject(req, in)
	return out, b.fail("copy", err)
}

func (b *Backend) copyObject(req *request, in s3response.CopyObjectInput) (s3response.CopyObjectOutput, error) {
	ctx := req.ctx
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
		// only the metadata changes, on the version the client read (the
		// ETag it names): a version written meanwhile is not overwritten
		// with the old one's replicas
		e, err := b.objects.SetMeta(ctx, srcBucket, srcKey, src, dst.UserMeta, dst.ContentType)
		if err != nil {
			return s3response.CopyObjectOutput{}, err
		}
		return copyResult(e), nil
	}
	body, err := b.openObject(req, src, 0, src.Size)
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	defer body.Close()
	dst.Checksum = src.Checksum
	dst, err = b.objects.Store(ctx, dst, body, b.policyOf(dstInfo).placement(), nil)
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	return copyResult(dst), nil
}

func copyResult(e catalog.Entry) s3response.CopyObjectOutput {
	return s3response.CopyObjectOutput{CopyObjectResult: &s3response.CopyObjectResult{ETag: &e.ETag, LastModified: &e.LastModified}}
}

// GetObjectAcl answers that the bucket's owner has full control: objects
// carry no ACLs of their own (s3cmd and rclone ask).
func (b *Backend) GetObjectAcl(ctx context.Context, in *s3.GetObjectAclInput) (*s3.GetObjectAclOutput, error) {
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
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
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
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
	req := b.request(ctx) // not fasthttp's context, which is reused once the request ends
	defer req.cancel()
	ctx = req.ctx
	if _, err := b.bucket(ctx, bucket); err != nil {
		return s3response.GetBucketVersioningOutput{}, err
	}
	return s3response.GetBucketVersioningOutput{}, nil
}
