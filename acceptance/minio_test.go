//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"testing"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/internal/localcluster"
)

func consulAPI(t *testing.T, addr string) *consulapi.Client {
	t.Helper()
	cfg := &consulapi.Config{Address: addr, Scheme: "http"}
	if sec := cluster.Secure; sec != nil { // the management token, over TLS
		cfg = &consulapi.Config{Address: addr, Token: sec.ConsulToken, TLSConfig: consulapi.TLSConfig{CAFile: sec.CAFile}}
	}
	c, err := consulapi.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func minioClient(t *testing.T, m localcluster.MinIOServer, access, secret string) *minio.Client {
	t.Helper()
	c, err := minio.New(m.HTTPAddr, &minio.Options{Creds: credentials.NewStaticV4(access, secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestObjectPutToEachMinIOReadsBackIdentical writes a small object and one
// large enough for a multipart upload to every server and reads both back.
func TestObjectPutToEachMinIOReadsBackIdentical(t *testing.T) {
	ctx := context.Background()
	if len(cluster.MinIO) < 3 {
		t.Fatalf("cluster has %d MinIO servers, want at least 3", len(cluster.MinIO))
	}
	sizes := map[string]int{"small.bin": 3 << 10, "large.bin": 20 << 20}
	for _, m := range cluster.MinIO {
		c := minioClient(t, m, m.AccessKey, m.SecretKey)
		bucket := uniqueName("acc")
		if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
			t.Fatalf("%s: make bucket: %v", m.Name, err)
		}
		for key, size := range sizes {
			data := make([]byte, size)
			if _, err := rand.Read(data); err != nil {
				t.Fatal(err)
			}
			if _, err := c.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(size), minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
				t.Fatalf("%s: put %s: %v", m.Name, key, err)
			}
			obj, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(obj)
			obj.Close()
			if err != nil {
				t.Fatalf("%s: get %s: %v", m.Name, key, err)
			}
			if sha256.Sum256(got) != sha256.Sum256(data) {
				t.Fatalf("%s: %s read back %d bytes that differ from the %d written", m.Name, key, len(got), len(data))
			}
		}
	}
}

// TestEachMinIOHasItsOwnCredentials checks that one server's keys do not
// open another: each harvested node's store is its own.
func TestEachMinIOHasItsOwnCredentials(t *testing.T) {
	a, b := cluster.MinIO[0], cluster.MinIO[1]
	if a.AccessKey == b.AccessKey || a.DataDir == b.DataDir {
		t.Fatalf("servers share credentials or data: %s/%s", a.Name, b.Name)
	}
	_, err := minioClient(t, b, a.AccessKey, a.SecretKey).ListBuckets(context.Background())
	if err == nil {
		t.Fatalf("%s accepted the credentials of %s", b.Name, a.Name)
	}
	if code := minio.ToErrorResponse(err).Code; code != "InvalidAccessKeyId" {
		t.Fatalf("unexpected refusal: %v (code %q)", err, code)
	}
}
