package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/internal/connect"
)

// clients is what the provider's Configure hands to resources and data
// sources. Nothing is dialled until a resource needs it.
type clients struct {
	nomadConn  connect.Nomad  // over NOMAD_* (connect starts from the api's DefaultConfig)
	consulConn connect.Consul // over CONSUL_*
	placer     api.Client
	blob       blobSettings
}

func (c *clients) consul() (*consulapi.Client, error) { return c.consulConn.Client() }

// errNotFound is a 404 from a Harvest API: the object is gone.
// errNotFound is a 404 from a Harvest API (api.ErrNotFound).
var errNotFound = api.ErrNotFound

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

func (b blobSettings) status(ctx context.Context) (api.BlobStatus, error) {
	return api.Client{Name: "harvest-blob", Address: b.admin, Token: b.adminToken, TLS: b.tls}.BlobStatus(ctx)
}
