//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// slowProxy forwards TCP connections to a MinIO, holding each chunk of the
// MinIO's answers for delay, and counts the GETs of replicas (objects of
// the front's data bucket but its .harvest/ records) that pass through it.
type slowProxy struct {
	addr  string
	delay time.Duration
	gets  atomic.Int64
}

func startSlowProxy(t *testing.T, upstream string, delay time.Duration) *slowProxy {
	t.Helper()
	p := &slowProxy{delay: delay}
	chunks := func(dst, src net.Conn, each func([]byte)) {
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				each(buf[:n])
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	p.addr = relay(t, upstream,
		func(dst, src net.Conn) { chunks(dst, src, func(b []byte) { p.gets.Add(int64(replicaGets(b))) }) }, // requests, counted
		func(dst, src net.Conn) { chunks(dst, src, func([]byte) { time.Sleep(p.delay) }) })                 // answers, each chunk late
	return p
}

// replicaGets counts the requests for replicas in b: GETs of the data
// bucket's objects, not of its location (?location=) nor of the .harvest/
// records the health checks read.
func replicaGets(b []byte) int {
	n := 0
	for _, part := range bytes.Split(b, []byte("GET /harvest-data/"))[1:] {
		if len(part) > 0 && part[0] != '?' && part[0] != ' ' && !bytes.HasPrefix(part, []byte(".harvest/")) {
			n++
		}
	}
	return n
}

// TestBlobReadsAvoidASlowReplica: store-1's MinIO is reached through a
// proxy that holds every answer 150 ms. Once a read has come from it, the
// front's peak-EWMA cost sends reads of objects it holds to their other
// replicas: of 180 reads, at most two more go to store-1, and its time to
// first byte shows in harvest_blob_node_first_byte_seconds.
func TestBlobReadsAvoidASlowReplica(t *testing.T) {
	ctx := context.Background()
	const prefix = "harvest-acc-readchoice/"
	ownPrefix(t, prefix)
	proxy := startSlowProxy(t, cluster.MinIO[0].HTTPAddr, 150*time.Millisecond)
	f := startPrefixedBlobVia(t, prefix, "", map[int]string{1: proxy.addr})
	if err := f.s3.MakeBucket(ctx, "choice", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	// enough objects that several list store-1 first, which reads in
	// catalogue order (the fewest in flight alone, as before) would read
	const objects = 60
	var wg sync.WaitGroup
	errs := make(chan error, objects)
	for w := range 6 { // store-1's writes are slow too: six at a time
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < objects; i += 6 {
				data := bytes.Repeat([]byte{byte(i)}, 4096)
				if _, err := f.s3.PutObject(ctx, "choice", fmt.Sprintf("o%02d", i), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	read := func(i int) {
		obj, err := f.s3.GetObject(ctx, "choice", fmt.Sprintf("o%02d", i), minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, 4096)) {
			t.Fatalf("o%02d read back %d bytes, %v", i, len(got), err)
		}
	}
	// until one read has come from store-1 (objects whose first replica it is)
	for deadline := time.Now().Add(time.Minute); proxy.gets.Load() == 0; {
		for i := range objects {
			read(i)
		}
		if time.Now().After(deadline) {
			t.Fatal("no read reached store-1 in a minute: does it hold no replica?")
		}
	}
	if fb := f.metric(t, `harvest_blob_node_first_byte_seconds{node="store-1"}`); fb < 0.15 {
		t.Fatalf("store-1's time to first byte %.3f s, want at least the proxy's 0.150 s", fb)
	}
	before := proxy.gets.Load()
	for range 3 {
		for i := range objects {
			read(i)
		}
	}
	if more := proxy.gets.Load() - before; more > 2 {
		t.Fatalf("%d of %d reads went to the slow store-1 after it had shown itself slow", more, 3*objects)
	}
	t.Logf("reads that went to store-1 after its first: %d of %d; its time to first byte %.3f s",
		proxy.gets.Load()-before, 3*objects, f.metric(t, `harvest_blob_node_first_byte_seconds{node="store-1"}`))
}
