package front

import (
	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/storage/grid"
)

// The status's wire types are the API's (api/blob.go): harvestctl, the
// Terraform provider and this front share one definition.
type (
	Status     = api.BlobStatus
	NodeStatus = api.BlobNode
)

// Status reports the nodes and the upkeep's progress (storage/upkeep: the
// repair's, with its ETA, and the last collector and scrubber passes).
func (b *Backend) Status() Status {
	up := 0
	cells := map[string]grid.Cell{}
	b.objects.WithGrid(func(g *grid.Grid) {
		for _, n := range b.nodes.List() {
			cells[n.Tenant], _ = g.CellOf(n.Tenant)
		}
	})
	var list []NodeStatus
	for _, n := range b.nodes.Snapshot() {
		list = append(list, NodeStatus{ID: n.ID, Tenant: n.Tenant, Environment: n.Environment, Rack: n.Rack,
			Row: cells[n.Tenant].Row, Col: cells[n.Tenant].Col, Up: n.Up, Busy: n.Busy, Removed: n.Removed, Used: n.Used, Room: n.Room, DiskFree: n.DiskFree,
			Capacity: n.Capacity, CapacityFrom: n.CapacityFrom})
		if n.Up {
			up++
		}
	}
	st := b.upkeep.Status(up)
	st.Nodes = list
	st.SafeMode = b.health.SafeMode()
	st.Fronts = b.health.Fronts()
	def := b.defaultPolicy()
	st.Replicas, st.ReplicasFrom = def.replicas, def.replicasFrom
	st.Diversity, st.DiversityFrom = diversity(def.strict), def.diversityFrom
	return st
}
