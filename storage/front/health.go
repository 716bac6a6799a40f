package front

import (
	"context"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/health"
)

// healthFront is the front as its health checks (storage/health) reach
// it: the buckets it keeps. Its methods are kept off the Backend, whose own
// are the S3 API's.
type healthFront struct{ b *Backend }

var _ health.Front = healthFront{}

func (f healthFront) Entries(ctx context.Context) ([]catalog.Entry, error) {
	entries, _, err := f.b.allEntries(ctx)
	return entries, err
}

func (f healthFront) MirrorBuckets(ctx context.Context, node *minio.Core) error {
	return f.b.mirrorBuckets(ctx, node)
}
