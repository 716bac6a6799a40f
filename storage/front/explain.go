package front

import (
	"context"
	"slices"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// ObjectExplanation is the admin API's answer about one object (api/blob.go).
type ObjectExplanation = api.BlobObject

// Explain says where an object's replicas are, in which grid cells, what
// the grid knows of their tenants, and what a read finds there now: for
// `harvestctl explain object` and an operator asking why a read answered
// SlowDown. A missing bucket or key is the S3 error a read would get.
func (b *Backend) Explain(ctx context.Context, bucket, key string) (ObjectExplanation, error) {
	e, err := b.entry(ctx, bucket, key)
	if err != nil {
		return ObjectExplanation{}, err
	}
	out := ObjectExplanation{Bucket: e.Bucket, Key: e.Key, Version: e.Version, Size: e.Size, ETag: e.ETag, Degraded: e.Degraded}
	g := b.objects.Grid()
	tenants := make([]*grid.Tenant, 0, len(e.Replicas))
	ns := b.nodes.Snapshot() // one look at the nodes, as Status takes it
	for _, r := range e.Replicas {
		rep := api.BlobReplica{Node: r.Node, Row: -1, Col: -1}
		if i := slices.IndexFunc(ns, func(n nodes.State) bool { return n.ID == r.Node }); i >= 0 {
			n, st := ns[i], ns[i].Stats
			rep.Tenant, rep.Environment, rep.Rack, rep.Configured = n.Tenant, n.Environment, n.Rack, !n.Removed
			rep.Up, rep.Busy = n.Up, n.Busy
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
