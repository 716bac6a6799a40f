//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestBlobCompleteAndAbortRacesLeaveOneOutcome: 50 multipart uploads, each
// ended by two Completes and an Abort sent at once. Whenever a Complete
// succeeds the object reads back exactly (both Completes answer the same
// ETag; a Complete retried afterwards answers it again) and the Abort
// failed; otherwise the key is absent. A HEAD never answers 200 while the
// GET fails. After the garbage collector's grace no replica or node upload
// is left that nothing names.
func TestBlobCompleteAndAbortRacesLeaveOneOutcome(t *testing.T) {
	f := startBlob(t, fastGC)
	defer f.stop()
	ctx := context.Background()
	core := minio.Core{Client: f.s3}
	if err := f.s3.MakeBucket(ctx, "races", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v (log %s)", err, f.log)
	}
	var completed, aborted int
	for round := 0; round < 50; round++ {
		key := fmt.Sprintf("round-%02d", round)
		id, err := core.NewMultipartUpload(ctx, "races", key, minio.PutObjectOptions{})
		if err != nil {
			t.Fatalf("%s: create: %v (log %s)", key, err, f.log)
		}
		rec, _, err := consulAPI(t, cluster.ConsulAddr()).KV().Get("harvest/blob/uploads/races/"+id, nil)
		var u struct{ Name string }
		if err != nil || rec == nil || json.Unmarshal(rec.Value, &u) != nil || u.Name == "" {
			t.Fatalf("%s: upload record %v %v", key, rec, err)
		}
		noteUpload("harvest/", u.Name)
		p1, p2 := make([]byte, 5<<20), make([]byte, 64<<10+round)
		_, _ = rand.Read(p1)
		_, _ = rand.Read(p2)
		var parts []minio.CompletePart
		for i, p := range [][]byte{p1, p2} {
			info, err := core.PutObjectPart(ctx, "races", key, id, i+1, bytes.NewReader(p), int64(len(p)), minio.PutObjectPartOptions{})
			if err != nil {
				t.Fatalf("%s: part %d: %v (log %s)", key, i+1, err, f.log)
			}
			parts = append(parts, minio.CompletePart{PartNumber: i + 1, ETag: info.ETag})
		}
		want := append(p1, p2...)

		start := make(chan struct{})
		var wg sync.WaitGroup
		etags, errs := make([]string, 2), make([]error, 3)
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				info, err := core.CompleteMultipartUpload(ctx, "races", key, id, parts, minio.PutObjectOptions{})
				etags[i], errs[i] = info.ETag, err
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// the Abort, having less to do, wins most races sent at once: in
			// some rounds it leaves the Completes a head start (0-40 ms), so
			// both outcomes and Complete-vs-Complete races come up
			time.Sleep(time.Duration(round%5) * 10 * time.Millisecond)
			errs[2] = core.AbortMultipartUpload(ctx, "races", key, id)
		}()
		close(start)
		wg.Wait()

		won := errs[0] == nil || errs[1] == nil
		_, headErr := f.s3.StatObject(ctx, "races", key, minio.StatObjectOptions{})
		obj, _ := f.s3.GetObject(ctx, "races", key, minio.GetObjectOptions{})
		got, getErr := io.ReadAll(obj)
		switch {
		case headErr == nil && getErr != nil:
			t.Fatalf("%s: HEAD 200 but GET failed: %v (log %s)", key, getErr, f.log)
		case won && errs[2] == nil:
			t.Fatalf("%s: a Complete and the Abort both succeeded: %v (log %s)", key, errs, f.log)
		case won && (getErr != nil || !bytes.Equal(got, want)):
			t.Fatalf("%s: completed (%v) but reads back %d bytes of %d: %v (log %s)", key, errs, len(got), len(want), getErr, f.log)
		case won && errs[0] == nil && errs[1] == nil && etags[0] != etags[1]:
			t.Fatalf("%s: two Completes answered ETags %s and %s", key, etags[0], etags[1])
		case !won && (minio.ToErrorResponse(headErr).Code != "NoSuchKey" || minio.ToErrorResponse(getErr).Code != "NoSuchKey"):
			t.Fatalf("%s: no Complete succeeded (%v) but HEAD %v, GET %v", key, errs, headErr, getErr)
		}
		if won {
			completed++
			etag := etags[0]
			if errs[0] != nil {
				etag = etags[1]
			}
			// a retried Complete answers as the first one did
			if info, err := core.CompleteMultipartUpload(ctx, "races", key, id, parts, minio.PutObjectOptions{}); err != nil || info.ETag != etag {
				t.Fatalf("%s: a retried Complete answered %q, %v; want 200 with %s", key, info.ETag, err, etag)
			}
		} else {
			aborted++
		}
		for _, err := range errs {
			if code := minio.ToErrorResponse(err).Code; err != nil && code != "NoSuchUpload" {
				t.Fatalf("%s: a loser answered %v, want NoSuchUpload", key, err)
			}
		}
	}
	t.Logf("50 rounds: %d completed, %d aborted", completed, aborted)
	if uploads, _, err := consulAPI(t, cluster.ConsulAddr()).KV().List("harvest/blob/uploads/races/", nil); err != nil || len(uploads) != 0 {
		t.Fatalf("%d upload records left (%v)", len(uploads), err)
	}
	waitNoOrphans(t, f, "harvest/", 3*time.Minute)
}

// TestBlobStoppedNodeHoldsNoRequest: with one MinIO stopped (SIGSTOP)
// under 20 concurrent PUTs and GETs, every request ends within the
// front's request deadline (most succeed: the stalled node's calls time
// out, reads move to other replicas, the node is marked down and skipped),
// the front's goroutines return to their number before, and after SIGCONT
// every acknowledged object reads back exactly.
func TestBlobStoppedNodeHoldsNoRequest(t *testing.T) {
	const requestDeadline = 60 * time.Second
	f := startBlob(t, `
timeouts {
  node    = "3s"
  request = "60s"
}`)
	defer f.stop()
	ctx := context.Background()
	if err := f.s3.MakeBucket(ctx, "stalls", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v (log %s)", err, f.log)
	}
	waitBlob(t, f, "every node up", func(st blobState) bool { return st.up == len(cluster.MinIO) })
	sums := map[string][32]byte{}
	var mu sync.Mutex
	put := func(key string) error {
		data := make([]byte, 1<<20+len(key))
		_, _ = rand.Read(data)
		_, err := f.s3.PutObject(ctx, "stalls", key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		if err == nil {
			mu.Lock()
			sums[key] = sha256.Sum256(data)
			mu.Unlock()
		}
		return err
	}
	for i := 0; i < 10; i++ {
		if err := put(fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	baseline := f.metric(t, "go_goroutines")

	m := storeMinIO(t, "store-1")
	if err := syscall.Kill(m.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(m.PID, syscall.SIGCONT)
		}
	}
	defer resume()
	type result struct {
		what string
		took time.Duration
		err  error
	}
	results := make(chan result, 20)
	for i := 0; i < 20; i++ {
		go func() {
			began := time.Now()
			var err error
			what := fmt.Sprintf("put during-%d", i)
			if i%2 == 0 {
				err = put(fmt.Sprintf("during-%d", i))
			} else {
				key := fmt.Sprintf("before-%d", i/2)
				what = "get " + key
				var obj *minio.Object
				if obj, err = f.s3.GetObject(ctx, "stalls", key, minio.GetObjectOptions{}); err == nil {
					var got []byte
					mu.Lock()
					want := sums[key]
					mu.Unlock()
					if got, err = io.ReadAll(obj); err == nil && sha256.Sum256(got) != want {
						err = fmt.Errorf("%s read back different bytes", key)
					}
				}
			}
			results <- result{what, time.Since(began), err}
		}()
	}
	failed := 0
	for i := 0; i < 20; i++ {
		select {
		case r := <-results:
			if r.took > requestDeadline {
				t.Errorf("%s took %s, beyond the front's %s deadline", r.what, r.took.Round(time.Millisecond), requestDeadline)
			}
			if r.err != nil {
				failed++
				t.Logf("%s failed after %s: %v", r.what, r.took.Round(time.Millisecond), r.err)
			}
		case <-time.After(3 * requestDeadline):
			t.Fatalf("%d requests still open after %s with store-1 stopped (log %s)", 20-i, 3*requestDeadline, f.log)
		}
	}
	t.Logf("20 requests with store-1 stopped: %d failed", failed)
	resume()
	waitBlob(t, f, "store-1 back up", func(st blobState) bool { return st.up == len(cluster.MinIO) })
	var now float64
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if now = f.metric(t, "go_goroutines"); now <= baseline+5 {
			break
		}
	}
	if now > baseline+5 {
		t.Errorf("goroutines %v, %v before the stop (log %s)", now, baseline, f.log)
	}
	t.Logf("goroutines: %v before, %v after", baseline, now)
	mu.Lock()
	defer mu.Unlock()
	for key, sum := range sums {
		obj, err := f.s3.GetObject(ctx, "stalls", key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		if err != nil || sha256.Sum256(got) != sum {
			t.Fatalf("%s, acknowledged, reads back %d bytes, %v", key, len(got), err)
		}
	}
	t.Logf("%d acknowledged objects read back exactly", len(sums))
}
