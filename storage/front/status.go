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
	b.nodes.mu.Lock()
	for _, n := range b.nodes.list {
		st.Nodes = append(st.Nodes, NodeStatus{ID: n.ID, Tenant: n.Tenant, Environment: n.Environment, Rack: n.Rack,
			Row: cells[n.Tenant].Row, Col: cells[n.Tenant].Col, Up: b.nodes.up[n.ID], Busy: b.nodes.busy[n.ID], Removed: b.nodes.removed[n.ID], Used: b.nodes.used(n.ID), Room: b.nodes.room(n.ID), DiskFree: b.nodes.spaceOf(n.ID).diskFree,
			Capacity: b.nodes.capacity[n.ID], CapacityFrom: b.nodes.capacityFrom[n.ID]})
		if b.nodes.up[n.ID] {
			up++
		}
	}
	b.nodes.mu.Unlock()
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
