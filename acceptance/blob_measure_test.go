//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/harvest-platform/harvest/internal/standin"
)

// TestMeasureBlobThroughput compares, in one run, 64 MiB PUTs and GETs
// through harvest-blob (R=3) with the same requests made directly to the
// MinIO servers: GET against one server, PUT against three parallel PUTs
// (what R=3 costs at least). It also compares a GET of a presigned URL of a
// bucket tagged harvest-read=redirect, followed by Go's net/http, with a
// GET of a presigned URL of the direct server by the same client. A GET
// through a bare TCP relay to the direct server (startRelay) shows what one
// more hop costs here before any S3 work: the ceiling for a proxied GET on
// this machine. Medians
// of 7 rounds, interleaved so that noise hits both sides alike; every GET
// checks it read all 64 MiB. It reports the ratios and asserts no goal:
// these machines are shared and noisy. Runs when HARVEST_MEASURE=1.
func TestMeasureBlobThroughput(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("set HARVEST_MEASURE=1 to measure blob throughput")
	}
	ctx := context.Background()
	f := startBlob(t)
	if err := f.s3.MakeBucket(ctx, "measure", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	var direct []*minio.Client
	for i := 0; i < 3; i++ {
		m := cluster.MinIO[i]
		c, err := minio.New(m.HTTPAddr, &minio.Options{Creds: credentials.NewStaticV4(m.AccessKey, m.SecretKey, "")})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.MakeBucket(ctx, "measure-direct", minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
		direct = append(direct, c)
	}
	if err := f.s3.MakeBucket(ctx, "measure-redirect", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	redirect, err := tags.NewTags(map[string]string{"harvest-read": "redirect"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s3.SetBucketTagging(ctx, "measure-redirect", redirect); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	put := func(c *minio.Client, bucket, key string) {
		if _, err := c.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{DisableMultipart: true}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(c *minio.Client, bucket, key string) {
		obj, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, obj); err != nil || n != int64(len(data)) {
			t.Fatalf("get %s: %d bytes, %v", key, n, err)
		}
	}
	httpGet := func(c *minio.Client, bucket, key string) {
		u, err := c.PresignedGetObject(ctx, bucket, key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != int64(len(data)) || resp.StatusCode != http.StatusOK {
			t.Fatalf("presigned get %s/%s: status %d, %d bytes, %v", bucket, key, resp.StatusCode, n, err)
		}
	}
	timed := func(fn func()) float64 {
		start := time.Now()
		fn()
		return time.Since(start).Seconds()
	}
	m := cluster.MinIO[0]
	relayed, err := minio.New(startRelay(t, m.HTTPAddr), &minio.Options{Creds: credentials.NewStaticV4(m.AccessKey, m.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	var frontPut, directPut3, frontGet, directGet, relayGet, redirectGet, presignedGet []float64
	const rounds = 7
	for i := 0; i < rounds; i++ {
		key := fmt.Sprintf("obj-%d", i)
		frontPut = append(frontPut, timed(func() { put(f.s3, "measure", key) }))
		directPut3 = append(directPut3, timed(func() {
			var wg sync.WaitGroup
			for _, c := range direct {
				wg.Add(1)
				go func() { defer wg.Done(); put(c, "measure-direct", key) }()
			}
			wg.Wait()
		}))
		frontGet = append(frontGet, timed(func() { get(f.s3, "measure", key) }))
		directGet = append(directGet, timed(func() { get(direct[0], "measure-direct", key) }))
		relayGet = append(relayGet, timed(func() { get(relayed, "measure-direct", key) }))
		put(f.s3, "measure-redirect", key)
		redirectGet = append(redirectGet, timed(func() { httpGet(f.s3, "measure-redirect", key) }))
		presignedGet = append(presignedGet, timed(func() { httpGet(direct[0], "measure-direct", key) }))
	}
	mib := float64(len(data)) / (1 << 20)
	fp, dp, fg, dg := standin.Median(frontPut), standin.Median(directPut3), standin.Median(frontGet), standin.Median(directGet)
	t.Logf("64 MiB PUT: front (R=3) %.0f MiB/s, three parallel direct PUTs %.0f MiB/s per object: ratio %.2f (goal >= 0.8)", mib/fp, mib/dp, dp/fp)
	t.Logf("64 MiB GET: front %.0f MiB/s, direct %.0f MiB/s: ratio %.2f (goal >= 0.9)", mib/fg, mib/dg, dg/fg)
	lg := standin.Median(relayGet)
	t.Logf("64 MiB GET through a bare TCP relay to the same MinIO (no S3 work, spliced by the kernel; the most any proxy could keep here): %.0f MiB/s: ratio to direct %.2f; the front's ratio to the relay %.2f",
		mib/lg, dg/lg, lg/fg)
	rg, pg := standin.Median(redirectGet), standin.Median(presignedGet)
	t.Logf("64 MiB GET of a presigned URL with net/http: front redirecting (harvest-read=redirect) %.0f MiB/s, direct %.0f MiB/s: ratio %.2f (goal >= 0.9)",
		mib/rg, mib/pg, pg/rg)
}

// TestMeasureBlobSmallObjects compares, in one run, the time of small GETs
// and HEADs through harvest-blob with the same requests made directly to
// one MinIO, one client, one request at a time (rounds interleaved; the
// median of each's mean over 100 requests). For small objects a read's
// time is the front's lookups (the bucket and the object's entry in
// Consul) before the node's own read. Runs when HARVEST_MEASURE=1.
func TestMeasureBlobSmallObjects(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("set HARVEST_MEASURE=1 to measure small reads")
	}
	ctx := context.Background()
	f := startBlob(t)
	m := cluster.MinIO[0]
	direct, err := minio.New(m.HTTPAddr, &minio.Options{Creds: credentials.NewStaticV4(m.AccessKey, m.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*minio.Client{f.s3, direct} {
		if err := c.MakeBucket(ctx, "measure-small", minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	each := func(fn func()) float64 { // mean milliseconds of 100 calls
		start := time.Now()
		for range 100 {
			fn()
		}
		return time.Since(start).Seconds() * 1000 / 100
	}
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		data := make([]byte, size)
		if _, err := rand.Read(data); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*minio.Client{f.s3, direct} {
			if _, err := c.PutObject(ctx, "measure-small", "k", bytes.NewReader(data), int64(size), minio.PutObjectOptions{DisableMultipart: true}); err != nil {
				t.Fatal(err)
			}
		}
		get := func(c *minio.Client) func() {
			return func() {
				obj, err := c.GetObject(ctx, "measure-small", "k", minio.GetObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, obj); err != nil || n != int64(size) {
					t.Fatalf("get: %d bytes, %v", n, err)
				}
			}
		}
		head := func(c *minio.Client) func() {
			return func() {
				if _, err := c.StatObject(ctx, "measure-small", "k", minio.StatObjectOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var frontGet, directGet, frontHead, directHead []float64
		for range 5 {
			frontGet, directGet = append(frontGet, each(get(f.s3))), append(directGet, each(get(direct)))
			frontHead, directHead = append(frontHead, each(head(f.s3))), append(directHead, each(head(direct)))
		}
		fg, dg, fh, dh := standin.Median(frontGet), standin.Median(directGet), standin.Median(frontHead), standin.Median(directHead)
		t.Logf("%4d KiB GET: front %.2f ms, direct %.2f ms: ratio %.2f; HEAD: front %.2f ms, direct %.2f ms",
			size>>10, fg, dg, dg/fg, fh, dh)
	}
}
