package front

import (
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/storage/grid"
)

// The status's wire types are the API's (api/blob.go): harvestctl, the
// Terraform provider and this front share one definition.
type (
	Status      = api.BlobStatus
	NodeStatus  = api.BlobNode
	GCReport    = api.GCReport
	ScrubReport = api.ScrubReport
)

// Status reports the nodes and the repair's progress.
func (b *Backend) Status() Status {
	r := b.repair
	r.mu.Lock()
	st := r.status
	st.Repaired = r.total
	recent := 0
	for _, t := range r.done {
		if time.Since(t) <= rateWindow {
			recent++
		}
	}
	r.mu.Unlock()
	st.SafeMode, st.LastGC, st.LastScrub = b.safe.reason(), b.LastGC(), b.LastScrub()
	st.Maintainer, st.Fronts = b.Maintainer(), int(b.frontsSeen.Load())
	def := b.defaultPolicy()
	st.Replicas, st.ReplicasFrom, st.LimitPerHour = def.replicas, def.replicasFrom, r.opts.PerServerPerHour
	st.Diversity, st.DiversityFrom = diversity(def.strict), def.diversityFrom
	up := 0
	b.mu.Lock()
	cells := map[string]grid.Cell{}
	for _, n := range b.nodes.List() {
		cells[n.Tenant], _ = b.grid.CellOf(n.Tenant)
	}
	b.mu.Unlock()
	for _, n := range b.nodes.Snapshot() {
		st.Nodes = append(st.Nodes, NodeStatus{ID: n.ID, Tenant: n.Tenant, Environment: n.Environment, Rack: n.Rack,
			Row: cells[n.Tenant].Row, Col: cells[n.Tenant].Col, Up: n.Up, Busy: n.Busy, Removed: n.Removed, Used: n.Used, Room: n.Room, DiskFree: n.DiskFree,
			Capacity: n.Capacity, CapacityFrom: n.CapacityFrom})
		if n.Up {
			up++
		}
	}
	st.RepairRatePerHour = float64(recent) / rateWindow.Hours()
	if st.UnderReplicated > 0 {
		ratePerHour := st.RepairRatePerHour
		if ratePerHour == 0 {
			ratePerHour = st.LimitPerHour * float64(max(up, 1))
		}
		st.ETASeconds = float64(st.UnderReplicated) / ratePerHour * 3600
	}
	return st
}
