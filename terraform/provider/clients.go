package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/internal/connect"
)

// clients is what the provider's Configure hands to resources and data
// sources. Nothing is dialled until a resource needs it.
type clients struct {
	nomadConn  connect.Nomad  // over NOMAD_* (connect starts from the api's DefaultConfig)
	consulConn connect.Consul // over CONSUL_*
	placer     placerClient
	blob       blobSettings
}

func (c *clients) nomad() (*nomadapi.Client, error) { return c.nomadConn.Client() }

func (c *clients) consul() (*consulapi.Client, error) { return c.consulConn.Client() }

// errNotFound is a 404 from a Harvest API: the object is gone.
var errNotFound = errors.New("not found")

// placerClient speaks the placer's JSON API with its token, over the
// provider's TLS settings for Harvest's APIs.
type placerClient struct {
	base, token string
	tls         connect.ClientTLS
}

// do sends body (when not nil) as JSON and decodes a 2xx answer into out
// (when not nil). A 404 is errNotFound; any other error names the API's
// own message.
func (p placerClient) do(ctx context.Context, method, path string, body, out any) error {
	return doJSON(ctx, p.tls, p.token, strings.TrimRight(p.base, "/")+path, method, body, out)
}

func doJSON(ctx context.Context, tlsc connect.ClientTLS, token, url, method string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	httpClient, err := tlsc.HTTPClient(30 * time.Second)
	if err != nil {
		return fmt.Errorf("TLS settings for %s: %w", url, err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s %s: %w: %s", method, url, errNotFound, apiError(raw))
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, apiError(raw))
	case out == nil || resp.StatusCode == http.StatusNoContent:
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, url, err)
	}
	return nil
}

// apiError is the {"error": "..."} message of a Harvest API, or the body.
func apiError(raw []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(raw))
}

// blobSettings says where the blob front is and how to reach it: its S3
// keys, its admin token, and the TLS settings for both (an https:// S3
// endpoint turns TLS on).
type blobSettings struct {
	endpoint, admin      string
	accessKey, secretKey string
	adminToken           string
	tls                  connect.ClientTLS
}

func (b blobSettings) s3() (*minio.Client, error) {
	if b.accessKey == "" || b.secretKey == "" {
		return nil, errors.New("the provider's blob_access_key and blob_secret_key (or HARVEST_BLOB_ACCESS_KEY/HARVEST_BLOB_SECRET_KEY) are needed for buckets")
	}
	endpoint, secure := b.endpoint, false
	if rest, ok := strings.CutPrefix(endpoint, "https://"); ok {
		endpoint, secure = rest, true
	} else {
		endpoint = strings.TrimPrefix(endpoint, "http://")
	}
	opts := &minio.Options{Creds: credentials.NewStaticV4(b.accessKey, b.secretKey, ""), Secure: secure}
	if secure {
		hc, err := b.tls.HTTPClient(0)
		if err != nil {
			return nil, fmt.Errorf("blob front TLS: %w", err)
		}
		opts.Transport = hc.Transport
	}
	return minio.New(endpoint, opts)
}

func (b blobSettings) status(ctx context.Context, out any) error {
	return doJSON(ctx, b.tls, b.adminToken, strings.TrimRight(b.admin, "/")+"/v1/status", http.MethodGet, nil, out)
}
