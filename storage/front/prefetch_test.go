package front

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/valyala/fasthttp"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"
)

// TestAnObjectsEntryIsReadWhileItsBucketIs: when the gateway asks for a
// bucket's ACL on a GET or HEAD of an object, the object's entry is
// already being read; GetObject and HeadObject then use that read and
// read the entry no more, however often the gateway asks for the ACL. A
// call for another key than the request's reads its own entry, a missing
// key is NoSuchKey, and a PUT reads nothing ahead.
func TestAnObjectsEntryIsReadWhileItsBucketIs(t *testing.T) {
	ctx := context.Background()
	b, counting := countingFront(t)
	data := bytes.Repeat([]byte("harvest "), 1000)
	for _, key := range []string{"k1", "dir/k 2"} {
		if _, err := b.PutObject(ctx, s3response.PutObjectInput{Bucket: ptr("data"), Key: ptr(key), ContentLength: ptr(int64(len(data))),
			Body: bytes.NewReader(data)}); err != nil {
			t.Fatal(err)
		}
	}
	request := func(method, key string) *fasthttp.RequestCtx {
		rc := &fasthttp.RequestCtx{}
		rc.Request.Header.SetMethod(method)
		rc.Request.SetRequestURI("/data/" + key)
		if _, err := b.GetBucketAcl(rc, &s3.GetBucketAclInput{Bucket: ptr("data")}); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	readAheadDone := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for counting.gets.Load() < want {
			if time.Now().After(deadline) {
				t.Fatalf("%d entry reads after the bucket's, want %d: nothing was read ahead", counting.gets.Load(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for _, key := range []string{"k1", "dir/k 2"} {
		counting.gets.Store(0)
		rc := request("GET", key)
		readAheadDone(1)
		out, err := b.GetObject(rc, &s3.GetObjectInput{Bucket: ptr("data"), Key: ptr(key)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("GET %s read %d bytes, %v", key, len(got), err)
		}
		if n := counting.gets.Load(); n != 1 {
			t.Errorf("GET %s read the entry %d times, want once", key, n)
		}
	}
	counting.gets.Store(0)
	rc := request("HEAD", "k1")
	if _, err := b.GetBucketAcl(rc, &s3.GetBucketAclInput{Bucket: ptr("data")}); err != nil { // asked twice, read once
		t.Fatal(err)
	}
	readAheadDone(1)
	if _, err := b.HeadObject(rc, &s3.HeadObjectInput{Bucket: ptr("data"), Key: ptr("k1")}); err != nil {
		t.Fatal(err)
	}
	if n := counting.gets.Load(); n != 1 {
		t.Errorf("HEAD read the entry %d times, want once", n)
	}
	// the read ahead names another key than the call: the call reads its own
	counting.gets.Store(0)
	rc = request("GET", "k1")
	out, err := b.GetObject(rc, &s3.GetObjectInput{Bucket: ptr("data"), Key: ptr("dir/k 2")})
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	readAheadDone(2)
	// a missing key is NoSuchKey from the read ahead too
	rc = request("GET", "nothing")
	_, err = b.GetObject(rc, &s3.GetObjectInput{Bucket: ptr("data"), Key: ptr("nothing")})
	var apiErr s3err.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "NoSuchKey" {
		t.Errorf("GET of a missing key: %v, want NoSuchKey", err)
	}
	// a PUT reads nothing ahead
	counting.gets.Store(0)
	rc = &fasthttp.RequestCtx{}
	rc.Request.Header.SetMethod("PUT")
	rc.Request.SetRequestURI("/data/k1")
	if _, err := b.GetBucketAcl(rc, &s3.GetBucketAclInput{Bucket: ptr("data")}); err != nil {
		t.Fatal(err)
	}
	if rc.UserValue(entryValue) != nil {
		t.Error("a PUT started an entry read")
	}
}
