package front

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/harvest-platform/harvest/storage/upkeep"
)

// TestMissesTellANoSuchBucketFromANoSuchKey: objects and uploads are read
// without the bucket record, which a miss then reads to answer right.
func TestMissesTellANoSuchBucketFromANoSuchKey(t *testing.T) {
	ctx := context.Background()
	b := testBackend(t, upkeep.RepairOptions{})
	if err := b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: ptr("there")}, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ bucket, want string }{{"there", "NoSuchKey"}, {"gone", "NoSuchBucket"}} {
		if _, err := b.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &c.bucket, Key: ptr("k")}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("head in %s: %v, want %s", c.bucket, err, c.want)
		}
		_, err := b.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &c.bucket, Key: ptr("k")})
		if c.bucket == "there" && err != nil || c.bucket == "gone" && (err == nil || !strings.Contains(err.Error(), "NoSuchBucket")) {
			t.Errorf("delete in %s: %v", c.bucket, err)
		}
		want := map[string]string{"there": "NoSuchUpload", "gone": "NoSuchBucket"}[c.bucket]
		if _, _, err := b.objects.LoadUpload(ctx, c.bucket, "k", "0123"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("upload in %s: %v, want %s", c.bucket, err, want)
		}
	}
}
