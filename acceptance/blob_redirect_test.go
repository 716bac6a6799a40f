//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// TestBlobRedirectBucketSendsReadersToTheNodes: a bucket tagged
// harvest-read=redirect answers a GET with a 307 to a presigned URL on a
// storage node's MinIO. curl -L and Go's net/http, given a presigned URL of
// the front, follow it and read the object byte-identical, whole and by
// range, with the content type the object was written with; minio-go, which
// follows no redirect, sees TemporaryRedirect; HEAD still answers from the
// front. The front counts the redirects.
func TestBlobRedirectBucketSendsReadersToTheNodes(t *testing.T) {
	ctx := context.Background()
	f := startBlob(t)
	if err := f.s3.MakeBucket(ctx, "redirected", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	tagSet, err := tags.NewTags(map[string]string{"harvest-read": "redirect"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s3.SetBucketTagging(ctx, "redirected", tagSet); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 5<<20+17)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s3.PutObject(ctx, "redirected", "data/shard-0", bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/x-shard"}); err != nil {
		t.Fatal(err)
	}
	presigned, err := f.s3.PresignedGetObject(ctx, "redirected", "data/shard-0", 5*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]bool{}
	for _, m := range cluster.MinIO {
		stores[m.HTTPAddr] = true
	}

	// Not followed: a 307 to a node, presigned for one minute.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(presigned.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusTemporaryRedirect || err != nil || !stores[loc.Host] || loc.Query().Get("X-Amz-Expires") != "60" {
		t.Fatalf("GET answered %d with Location %q, want a 307 to a storage node's MinIO presigned for 60 s", resp.StatusCode, resp.Header.Get("Location"))
	}
	t.Logf("redirected to %s%s", loc.Host, loc.Path)

	// Go's net/http follows it.
	resp, err = http.Get(presigned.String())
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, data) || resp.Header.Get("Content-Type") != "application/x-shard" {
		t.Fatalf("net/http read %d bytes (status %d, %v, type %q), want the %d written, application/x-shard",
			len(got), resp.StatusCode, err, resp.Header.Get("Content-Type"), len(data))
	}

	// curl -L, whole and by range.
	out := filepath.Join(t.TempDir(), "shard")
	if b, err := exec.Command("curl", "-sSfL", "-o", out, presigned.String()).CombinedOutput(); err != nil {
		t.Fatalf("curl -L: %v: %s", err, b)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, data) {
		t.Fatalf("curl -L read %d bytes, want the %d written", len(got), len(data))
	}
	ranged, err := exec.Command("curl", "-sSfL", "-r", "1048570-1048599", presigned.String()).Output()
	if err != nil || !bytes.Equal(ranged, data[1048570:1048600]) {
		t.Fatalf("curl -L -r 1048570-1048599: %d bytes, %v; want bytes 1048570-1048599", len(ranged), err)
	}

	// minio-go follows no redirect: it sees the 307 as an error.
	obj, err := f.s3.GetObject(ctx, "redirected", "data/shard-0", minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Read(make([]byte, 1))
		obj.Close()
	}
	if code := minio.ToErrorResponse(err).Code; code != "TemporaryRedirect" {
		t.Fatalf("minio-go GET of a redirect bucket: %v (code %q), want TemporaryRedirect", err, code)
	}
	if st, err := f.s3.StatObject(ctx, "redirected", "data/shard-0", minio.StatObjectOptions{}); err != nil || st.Size != int64(len(data)) {
		t.Fatalf("HEAD: %+v, %v", st, err)
	}
	if n := f.metric(t, "harvest_blob_read_redirects_total"); n < 4 {
		t.Fatalf("harvest_blob_read_redirects_total %v, want at least the 4 GETs redirected", n)
	}
}
