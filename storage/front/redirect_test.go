package front

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/valyala/fasthttp"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/kv"
)

// serverGet is a GET as the gateway makes it: GetBucketAcl, then GetObject,
// on one request's fasthttp context.
func serverGet(t *testing.T, b *Backend, in *s3.GetObjectInput, query string) (*fasthttp.RequestCtx, *s3.GetObjectOutput, error) {
	t.Helper()
	rc := &fasthttp.RequestCtx{}
	rc.Request.SetRequestURI("/" + *in.Bucket + "/" + *in.Key + query)
	if _, err := b.GetBucketAcl(rc, &s3.GetBucketAclInput{Bucket: in.Bucket}); err != nil {
		t.Fatal(err)
	}
	out, err := b.GetObject(rc, in)
	return rc, out, err
}

// TestRedirectBucketsSendGetsToAReplica: a bucket tagged
// harvest-read=redirect answers a GET with a 307 whose Location is a
// presigned GET of a replica on a node that is up and not busy, carrying
// the object's content type and the client's response overrides; the URL
// reads the object's bytes. A GET by part number or asking for checksums,
// a bucket without the tag, and a call outside a server are proxied. A bad
// tag value is refused.
func TestRedirectBucketsSendGetsToAReplica(t *testing.T) {
	ctx := context.Background()
	stores, cfgs := memNodes(t)
	b, _ := frontOver(t, kv.NewMem(), cfgs)
	makeBucket(t, b, "redirected", map[string]string{tagRead: readRedirect})
	makeBucket(t, b, "proxied", nil)
	data := bytes.Repeat([]byte("harvest "), 4096)
	for _, bucket := range []string{"redirected", "proxied"} {
		if _, err := b.PutObject(ctx, s3response.PutObjectInput{Bucket: ptr(bucket), Key: ptr("k"), ContentType: ptr("text/plain"),
			ContentLength: ptr(int64(len(data))), Body: bytes.NewReader(data)}); err != nil {
			t.Fatal(err)
		}
	}
	e, err := b.cat.Get(ctx, "redirected", "k")
	if err != nil {
		t.Fatal(err)
	}
	endpoints := map[string]string{}
	for _, c := range cfgs {
		endpoints[c.Endpoint] = c.ID
	}
	holders := map[string]string{} // node -> replica name
	for _, r := range e.Replicas {
		holders[r.Node] = r.Name
	}

	// Every holder but one busy: the redirect names that one.
	var free string
	for node := range holders {
		free = node
		break
	}
	for node := range holders {
		b.nodes.SetBusy(node, node != free)
	}
	rc, _, err := serverGet(t, b, &s3.GetObjectInput{Bucket: ptr("redirected"), Key: ptr("k")}, "?response-content-disposition=attachment")
	var api s3err.APIError
	if !errors.As(err, &api) || api.HTTPStatusCode != http.StatusTemporaryRedirect || api.Code != "TemporaryRedirect" {
		t.Fatalf("redirect bucket answered %v, want a 307 TemporaryRedirect", err)
	}
	loc, err := url.Parse(string(rc.Response.Header.Peek("Location")))
	if err != nil {
		t.Fatal(err)
	}
	if node := endpoints[loc.Host]; node != free || loc.Path != "/"+DataBucket+"/"+holders[free] {
		t.Fatalf("redirected to %s (node %q), want replica %s on the one node not busy, %s", loc, node, holders[free], free)
	}
	q := loc.Query()
	if q.Get("X-Amz-Signature") == "" || q.Get("X-Amz-Expires") != "60" || q.Get("response-content-type") != "text/plain" ||
		q.Get("response-content-disposition") != "attachment" {
		t.Fatalf("presigned query %v: want a signature valid 60 s, the object's content type and the client's override", q)
	}
	resp, err := http.Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("the presigned URL read %d bytes, want the object's %d", len(got), len(data))
	}
	if n := testutil.ToFloat64(b.metrics.redirects); n != 1 {
		t.Fatalf("read_redirects_total %v, want 1", n)
	}

	// Every holder busy: SlowDown, as a proxied read would answer.
	b.nodes.SetBusy(free, true)
	if _, _, err := serverGet(t, b, &s3.GetObjectInput{Bucket: ptr("redirected"), Key: ptr("k")}, ""); !errors.As(err, &api) || api.Code != "SlowDown" {
		t.Fatalf("every holder busy: %v, want SlowDown", err)
	}
	for node := range holders {
		b.nodes.SetBusy(node, false)
	}

	// Proxied: no tag, by part number, checksums asked for, outside a server.
	for name, in := range map[string]*s3.GetObjectInput{
		"no tag":         {Bucket: ptr("proxied"), Key: ptr("k")},
		"part number":    {Bucket: ptr("redirected"), Key: ptr("k"), PartNumber: ptr(int32(1))},
		"checksums mode": {Bucket: ptr("redirected"), Key: ptr("k"), ChecksumMode: types.ChecksumModeEnabled},
	} {
		rc, out, err := serverGet(t, b, in, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if !bytes.Equal(got, data) || len(rc.Response.Header.Peek("Location")) != 0 {
			t.Fatalf("%s: read %d bytes with Location %q, want the object streamed", name, len(got), rc.Response.Header.Peek("Location"))
		}
	}
	if got := getBytes(t, b, "redirected", "k"); !bytes.Equal(got, data) {
		t.Fatal("outside a server the read was not proxied")
	}
	everyReplicaOnItsNode(t, b, stores, "redirected", "k", data)

	// conditions are judged on the catalogue's ETag before anything is read or
	// redirected: 304 for a matching If-None-Match, 412 for a failed If-Match
	etag := strings.Trim(e.ETag, `"`)
	status := func(err error) int {
		var s3e s3err.S3Error
		if errors.As(err, &s3e) {
			return s3e.StatusCode()
		}
		return 0
	}
	for _, bucket := range []string{"redirected", "proxied"} {
		_, _, err := serverGet(t, b, &s3.GetObjectInput{Bucket: ptr(bucket), Key: ptr("k"), IfNoneMatch: ptr(etag)}, "")
		if status(err) != http.StatusNotModified {
			t.Fatalf("%s: If-None-Match of the current ETag answered %v, want 304", bucket, err)
		}
		_, _, err = serverGet(t, b, &s3.GetObjectInput{Bucket: ptr(bucket), Key: ptr("k"), IfMatch: ptr("0123")}, "")
		if status(err) != http.StatusPreconditionFailed {
			t.Fatalf("%s: If-Match of another ETag answered %v, want 412", bucket, err)
		}
		if _, err := b.HeadObject(ctx, &s3.HeadObjectInput{Bucket: ptr(bucket), Key: ptr("k"), IfMatch: ptr("0123")}); status(err) != http.StatusPreconditionFailed {
			t.Fatalf("%s: HEAD with If-Match of another ETag answered %v, want 412", bucket, err)
		}
	}
	if n := testutil.ToFloat64(b.metrics.redirects); n != 1 {
		t.Fatalf("read_redirects_total %v after the conditional GETs, want still 1", n)
	}
	rc, _, err = serverGet(t, b, &s3.GetObjectInput{Bucket: ptr("redirected"), Key: ptr("k"), IfMatch: ptr(etag)}, "")
	if !errors.As(err, &api) || api.HTTPStatusCode != http.StatusTemporaryRedirect || len(rc.Response.Header.Peek("Location")) == 0 {
		t.Fatalf("If-Match of the current ETag: %v, want the redirect", err)
	}

	if err := b.PutBucketTagging(ctx, "proxied", map[string]string{tagRead: "sometimes"}); err == nil || !strings.Contains(err.Error(), "harvest-read") {
		t.Fatalf("tag harvest-read=sometimes: %v, want refused", err)
	}
}
