package provider

import (
	"context"
	"fmt"
	"regexp"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
)

var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`)

// bucketTags reads a bucket's tags; a bucket without tags has none (S3
// answers NoSuchTagSet).
func bucketTags(ctx context.Context, s3 *minio.Client, bucket string) (map[string]string, error) {
	t, err := s3.GetBucketTagging(ctx, bucket)
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchTagSet" {
			return map[string]string{}, nil
		}
		return nil, fmt.Errorf("bucket %s: reading its tags: %w", bucket, err)
	}
	return t.ToMap(), nil
}

// putBucketTags replaces a bucket's tags (removing them when there are none).
func putBucketTags(ctx context.Context, s3 *minio.Client, bucket string, m map[string]string) error {
	if len(m) == 0 {
		if err := s3.RemoveBucketTagging(ctx, bucket); err != nil {
			return fmt.Errorf("bucket %s: removing its tags: %w", bucket, err)
		}
		return nil
	}
	t, err := tags.NewTags(m, false)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", bucket, err)
	}
	if err := s3.SetBucketTagging(ctx, bucket, t); err != nil {
		return fmt.Errorf("bucket %s: writing its tags: %w", bucket, err)
	}
	return nil
}

// emptyBucket deletes every object of a bucket (force_destroy).
func emptyBucket(ctx context.Context, s3 *minio.Client, bucket string) error {
	objects := s3.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true})
	for res := range s3.RemoveObjects(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
		if res.Err != nil {
			return fmt.Errorf("bucket %s: deleting %s: %w", bucket, res.ObjectName, res.Err)
		}
	}
	return nil
}
