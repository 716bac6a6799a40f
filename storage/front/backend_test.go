package front

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestRepairAllowanceIsTakenFromAllReceiversOrNone: a repair refused
// because one receiving server has used its hourly allowance leaves the
// other servers' allowance untouched.
func TestRepairAllowanceIsTakenFromAllReceiversOrNone(t *testing.T) {
	r := newRepairer(nil, RepairOptions{PerServerPerHour: 1})
	if !r.allow([]string{"na"}) {
		t.Fatal("a fresh server refused its first replica")
	}
	if r.allow([]string{"nb", "na"}) {
		t.Fatal("na received two replicas within the hour")
	}
	if !r.allow([]string{"nb", "nc"}) {
		t.Fatal("nb's allowance was used up by a repair that was refused")
	}
}

// TestMissesTellANoSuchBucketFromANoSuchKey: objects and uploads are read
// without the bucket record, which a miss then reads to answer right.
func TestMissesTellANoSuchBucketFromANoSuchKey(t *testing.T) {
	ctx := context.Background()
	b := testBackend(t, RepairOptions{})
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
		if _, _, err := b.loadUpload(ctx, c.bucket, "k", "0123"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("upload in %s: %v, want %s", c.bucket, err, want)
		}
	}
}
