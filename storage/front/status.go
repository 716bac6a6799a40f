package front

import (
	"time"

	"github.com/harvest-platform/harvest/storage/grid"
)

// Status is the blob tier's state as `harvestctl blob status` shows it.
type Status struct {
	Nodes []NodeStatus `json:"nodes"`
	// Replicas and Diversity are the default of buckets without policy
	// tags: the policy document's, else the front's configuration
	// (ReplicasFrom, DiversityFrom: "policy" or "config").
	Replicas        int    `json:"replicas"`
	ReplicasFrom    string `json:"replicas_from"`
	Diversity       string `json:"diversity"`
	DiversityFrom   string `json:"diversity_from"`
	Objects         int    `json:"objects"`
	UnderReplicated int    `json:"under_replicated"`
	Lost            int    `json:"lost"` // objects with no replica left
	Repaired        int64  `json:"repaired_replicas"`
	// RepairRatePerHour is replicas re-created per hour over the last ten
	// minutes; ETASeconds is how long the under-replicated objects take at
	// that rate (or at the configured limit when nothing was repaired yet).
	RepairRatePerHour float64   `json:"repair_rate_per_hour"`
	LimitPerHour      float64   `json:"limit_per_server_per_hour"`
	ETASeconds        float64   `json:"eta_seconds"`
	LastScan          time.Time `json:"last_scan"`
	// SafeMode says why forgetting replicas, repairs and the garbage
	// collector are held back ("" when they are not).
	SafeMode  string      `json:"safe_mode,omitempty"`
	LastGC    GCReport    `json:"last_gc"`
	LastScrub ScrubReport `json:"last_scrub"`
}

// NodeStatus is one storage node's standing.
type NodeStatus struct {
	ID          string `json:"id"`
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	Rack        string `json:"rack"`
	Row         int    `json:"row"` // grid cell: peak CPU low..high
	Col         int    `json:"col"` // grid cell: reimages infrequent..frequent
	Up          bool   `json:"up"`
	Busy        bool   `json:"busy"`
	Used        int64  `json:"used_bytes"`
	// Capacity is the effective one: the tenant's declared storage_mb
	// (CapacityFrom "tenant"), else the configured capacity_mb ("config").
	// Used may exceed it after a shrink: the node is full, nothing is deleted.
	Capacity     int64  `json:"capacity_bytes"`
	CapacityFrom string `json:"capacity_from"`
	// Room is what the node may still take: within its capacity (less
	// what it holds, orphans and writes in flight included) and its free
	// disk (DiskFree, -1 when it cannot be read) less min_free_mb.
	Room     int64 `json:"room_bytes"`
	DiskFree int64 `json:"disk_free_bytes"`
}

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
			Row: cells[n.Tenant].Row, Col: cells[n.Tenant].Col, Up: b.nodes.up[n.ID], Busy: b.nodes.busy[n.ID], Used: b.nodes.used(n.ID), Room: b.nodes.room(n.ID), DiskFree: b.nodes.spaceOf(n.ID).diskFree,
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
