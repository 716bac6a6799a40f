package front

import (
	"context"
	"errors"
	"slices"

	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// ObjectExplanation is the admin API's answer about one object (api/blob.go).
type ObjectExplanation = api.BlobObject

// Explain says where an object's replicas are, in which grid cells, what
// the grid knows of their tenants, and what a read finds there now: for
// `harvestctl explain object` and an operator asking why a read answered
// SlowDown. A missing bucket or key is the S3 error a read would get, as
// an s3err.APIError.
func (b *Backend) Explain(ctx context.Context, bucket, key string) (ObjectExplanation, error) {
	e, err := b.entry(ctx, bucket, key)
	var gone s3err.BucketError
	if errors.As(err, &gone) {
		err = gone.APIError
	}
	if err != nil {
		return ObjectExplanation{}, err
	}
	out := ObjectExplanation{Bucket: e.Bucket, Key: e.Key, Version: e.Version, Size: e.Size, ETag: e.ETag, Degraded: e.Degraded}
	b.mu.Lock()
	g := b.grid
	b.mu.Unlock()
	list := b.nodes.List()
	b.nodes.mu.Lock()
	stats := b.nodes.stats
	b.nodes.mu.Unlock()
	tenants := make([]*grid.Tenant, 0, len(e.Replicas))
	for _, r := range e.Replicas {
		rep := api.BlobReplica{Node: r.Node, Row: -1, Col: -1}
		i := slices.IndexFunc(list, func(n nodes.Node) bool { return n.ID == r.Node })
		if i >= 0 {
			n := list[i]
			st := stats[n.Tenant]
			rep.Tenant, rep.Environment, rep.Rack, rep.Configured = n.Tenant, n.Environment, n.Rack, !b.nodes.isRemoved(n.ID)
			rep.Up, rep.Busy = b.nodes.Up(n.ID), b.nodes.Busy(n.ID)
			rep.PeakCPU, rep.ReimageRate, rep.BusyHours = st.PeakCPU, st.ReimageRate, st.BusyHours
			if g != nil {
				if c, ok := g.CellOf(n.Tenant); ok {
					rep.Row, rep.Col = c.Row, c.Col
				}
			}
			if rep.Up && !rep.Busy {
				out.ReadableNow++
			}
		}
		out.Replicas = append(out.Replicas, rep)
		tenants = append(tenants, &grid.Tenant{ID: rep.Tenant, BusyHours: rep.BusyHours})
	}
	out.AllBusyHoursPerDay = grid.AllBusyHours(tenants)
	return out, nil
}
