package front

import (
	"context"
	"io"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// upkeepFront is the front as its upkeep (storage/upkeep) reaches it: the
// buckets' policies, safe mode, the read path the scrubber's reads and a
// repair's sources go through, and the write path (storage/objects: the
// grid, a repair's placement and copies, the abort of an upload left
// open). Its methods are kept off the Backend, whose own are the S3 API's.
type upkeepFront struct{ b *Backend }

var _ upkeep.Front = upkeepFront{}

func (f upkeepFront) SafeMode() string { return f.b.health.SafeMode() }

func (f upkeepFront) Entries(ctx context.Context) ([]catalog.Entry, map[string]upkeep.Policy, error) {
	entries, policies, err := f.b.allEntries(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]upkeep.Policy, len(policies))
	for bucket, p := range policies {
		out[bucket] = p.placement()
	}
	return entries, out, nil
}

func (f upkeepFront) BucketPolicy(ctx context.Context, bucket string) (upkeep.Policy, error) {
	info, err := f.b.bucket(ctx, bucket)
	if err != nil {
		return upkeep.Policy{}, err
	}
	return f.b.policyOf(info).placement(), nil
}

func (f upkeepFront) Place(e catalog.Entry, pol upkeep.Policy, existing []string) (grid.Placement, error) {
	return f.b.objects.Place(e, e.Size, pol, existing)
}

// OpenObject reads as a GET does, under a request of its own that ends
// when the body is closed (ctx carries the repair's deadline).
func (f upkeepFront) OpenObject(ctx context.Context, e catalog.Entry) (io.ReadCloser, error) {
	req := &request{idle: f.b.timeouts.Idle}
	req.ctx, req.cancel = context.WithCancel(ctx)
	body, err := f.b.openObject(req, e, 0, e.Size)
	if err != nil {
		req.cancel()
	}
	return body, err
}

func (f upkeepFront) OpenReplica(ctx context.Context, r catalog.Replica, size int64) (io.ReadCloser, error) {
	return f.b.openRange(ctx, r, 0, size, size)
}

func (f upkeepFront) WriteReplicas(ctx context.Context, nodeIDs []string, e catalog.Entry, body io.Reader) (string, []byte, error) {
	return f.b.objects.WriteReplicas(ctx, nodeIDs, e, body)
}

func (f upkeepFront) Regrid() { f.b.objects.Regrid() }

func (f upkeepFront) RepairRisks(survivors [][]string) []float64 {
	risk := make([]float64, len(survivors))
	f.b.objects.WithGrid(func(g *grid.Grid) {
		for i, ids := range survivors {
			risk[i] = g.RepairRisk(ids)
		}
	})
	return risk
}

func (f upkeepFront) AbortUpload(ctx context.Context, bucket, key, id string) error {
	return f.b.objects.AbortOnce(ctx, bucket, key, id)
}

func (f upkeepFront) RestoreBuckets(ctx context.Context, node *minio.Core) (int, error) {
	return f.b.restoreBuckets(ctx, node)
}
