package front

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/valyala/fasthttp"
	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// A bucket tagged harvest-read=redirect has its GETs answered with
// 307 Temporary Redirect to a presigned GET of one replica on its storage
// node, chosen as a proxied read would choose it (up, not busy, least
// peak-EWMA cost: storage/nodes/readchoice.go). The bytes then go from the node's disk to the client without
// passing through the front, which only looks the object up: for clients
// that follow redirects (curl -L, browsers, Go's net/http, Python requests,
// dataset loaders reading presigned URLs) a GET costs what a GET from the
// node costs. SDKs that do not follow redirects (minio-go, the AWS SDKs,
// warp) get the 307 as an error, so the policy is for buckets read that way.
//
// What a redirected read gives up, and why it is a bucket's choice:
//   - the front's block checks: the node's own checks apply where its deployment has them,
//     and the scrubber still checks every replica in the background;
//   - moving to another replica mid-read: a node that fails mid-read fails
//     the client's read, which the client retries (and is sent elsewhere);
//   - the catalogue's headers: ETag, Last-Modified and user metadata come
//     from the node's copy (the content type, and the client's own
//     response-* overrides, are passed on in the presigned URL);
//   - the nodes must be reachable from the clients, at the endpoints the
//     front is configured with.
//
// A GET by part number, or one asking for the object's checksums, is
// proxied: the node's copy knows neither.
const (
	readProxy    = contract.BucketReadProxy
	readRedirect = contract.BucketReadRedirect

	// redirectExpiry is how long a redirect's presigned URL is valid: the
	// client must start its read on the node within it (a read started in
	// time runs to its end). It names one object on one node, read-only.
	redirectExpiry = time.Minute

	// bucketValue is where a request keeps the bucket record the gateway
	// read for it (GetBucketAcl, before every request), so that GetObject
	// knows the bucket's read policy without reading it again.
	bucketValue = "harvest-bucket"
)

// errTemporaryRedirect is S3's answer that sends a request elsewhere; the
// Location header says where.
var errTemporaryRedirect = s3err.APIError{Code: "TemporaryRedirect", HTTPStatusCode: http.StatusTemporaryRedirect,
	Description: "Please re-send this request to the specified temporary endpoint."}

// responseOverrides are the GET query parameters that set the response's
// headers; a redirect passes the client's on to the node.
var responseOverrides = []string{"response-content-type", "response-content-language", "response-expires",
	"response-cache-control", "response-content-disposition", "response-content-encoding"}

// rememberBucket keeps a bucket record on the request it was read for.
func rememberBucket(parent context.Context, info *bucketInfo) {
	if rc, ok := parent.(*fasthttp.RequestCtx); ok {
		rc.SetUserValue(bucketValue, info)
	}
}

// redirects reports whether a GET should be redirected: the bucket asks for
// it, and the read is one a node's copy can answer. Outside a server
// (tests calling the backend) nothing is redirected.
func (b *Backend) redirects(parent, ctx context.Context, in *s3.GetObjectInput) (*fasthttp.RequestCtx, bool, error) {
	rc, ok := parent.(*fasthttp.RequestCtx)
	if !ok || in.PartNumber != nil || in.ChecksumMode == types.ChecksumModeEnabled {
		return nil, false, nil
	}
	info, _ := rc.UserValue(bucketValue).(*bucketInfo)
	if info == nil || info.Name != *in.Bucket {
		var err error
		if info, err = b.bucket(ctx, *in.Bucket); err != nil {
			return nil, false, err
		}
	}
	return rc, info.Tags[tagRead] == readRedirect, nil
}

// redirect answers a GET of e with a 307 to a presigned URL on the replica
// a proxied read would start from.
func (b *Backend) redirect(ctx context.Context, rc *fasthttp.RequestCtx, e catalog.Entry) error {
	cands, err := b.readable(e)
	if err != nil {
		return err
	}
	params := url.Values{}
	if e.ContentType != "" {
		params.Set("response-content-type", e.ContentType)
	}
	for _, name := range responseOverrides {
		if v := rc.QueryArgs().Peek(name); len(v) > 0 {
			params.Set(name, string(v))
		}
	}
	r := cands[0]
	u, err := b.nodes.Client(r.Node).PresignedGetObject(ctx, DataBucket, r.Name, redirectExpiry, params)
	if err != nil {
		return err
	}
	rc.Response.Header.Set("Location", u.String())
	b.metrics.redirects.Inc()
	return errTemporaryRedirect
}
