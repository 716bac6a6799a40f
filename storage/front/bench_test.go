package front

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/harvest-platform/harvest/kv"
)

// BenchmarkGetObject64MiB is the front's own work per large GET: the
// catalogue read, the node call (minio-go over HTTP to an in-memory node on
// loopback), every block's CRC-32C and the hand-over to the S3 server's
// writer (WriteTo into a discarding writer, as versitygw copies a body). The
// in-memory node's serving is in the same process: -cpuprofile tells the two
// apart by function.
func BenchmarkGetObject64MiB(b *testing.B) {
	front, _, _ := declBackend(b, kv.NewMem())
	makeBucket(b, front, "data", nil)
	data := bytes.Repeat([]byte("harvest!"), 8<<20)
	if err := putBytes(b, front, "data", "k", data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		out, err := front.GetObject(context.Background(), &s3.GetObjectInput{Bucket: ptr("data"), Key: ptr("k")})
		if err != nil {
			b.Fatal(err)
		}
		n, err := out.Body.(io.WriterTo).WriteTo(io.Discard)
		out.Body.Close()
		if err != nil || n != int64(len(data)) {
			b.Fatalf("%d bytes, %v", n, err)
		}
	}
}
