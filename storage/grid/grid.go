// Package grid is Algorithm 2 of history-based-harvesting.txt (Section 4.2,
// "Replica placement algorithm"): primary tenants are clustered into a 3x3
// grid of reimage frequency (columns: infrequent, intermediate, frequent) by
// peak CPU utilisation (rows: low, medium, high), each cell holding the same
// share of the free space and each tenant in exactly one cell; the replicas
// of a block go to cells with no repeated row or column, to tenants of
// distinct environments (and, beyond the paper, distinct racks), forgetting
// rows and columns every third replica. It is pure: the blob front and the
// simulator share it.
package grid

import (
	"sort"
)

// Size is the grid's side: 3x3 classes as in the paper.
const Size = 3

// Node is one storage server.
type Node struct {
	ID     string
	Tenant string
	Rack   string
	Free   int64 // bytes it may still take
	Busy   bool  // its primary tenant needs it: no new replicas
}

// Tenant is one primary tenant and its storage nodes.
type Tenant struct {
	ID          string
	Environment string
	ReimageRate float64 // reimages per server per month
	PeakCPU     float64 // percent
	// BusyHours, beyond the paper, is the share of the tenant's history in
	// each hour of the day (UTC, 24 values) at which its servers were busy;
	// nil when unknown. With HourCandidates it steers a block's replicas to
	// tenants busy at different hours (place.go).
	BusyHours []float64
	Nodes     []*Node
}

func (t *Tenant) free() int64 {
	var s int64
	for _, n := range t.Nodes {
		s += n.Free
	}
	return s
}

// Cell is a grid position: Col by reimage frequency, Row by peak CPU.
type Cell struct{ Row, Col int }

// Grid is the clustering of tenants into cells.
type Grid struct {
	cells  [Size][Size][]*Tenant
	cellOf map[string]Cell
	nodes  map[string]*Node
	tenant map[string]*Tenant
	// maxRate is the highest reimage rate of any tenant (RepairRisk's
	// rate for a node it does not know).
	maxRate float64
	// HourCandidates, beyond the paper, is how many eligible tenants of a
	// chosen cell a pick compares by how often they are busy at the same
	// hours as the block's other replicas (their BusyHours); 0 or 1 keeps
	// Algorithm 2's single random pick.
	HourCandidates int
	// SteerFirst, beyond the paper, lets HourCandidates choose a block's
	// first replica too (when no writer's server takes it): the candidate
	// least often busy at all. Without it the first replica is Algorithm
	// 2's random pick and only the later ones are compared.
	SteerFirst bool
	// PickJointly, beyond the paper, chooses the replicas that complete a
	// round of the grid together (joint.go): with HourCandidates > 1 it
	// draws that many tenants in a cell of each row still free and keeps
	// the combination least often all busy at the same hour, where
	// Algorithm 2 picks one replica at a time.
	PickJointly bool
}

// Build clusters tenants (lines 4-5): columns split the total free space
// into thirds by reimage rate, then each column's rows split it into thirds
// by peak CPU, so every cell holds about S/9; a tenant is never split, it
// goes to the third its space's midpoint falls in.
func Build(tenants []*Tenant) *Grid {
	g := &Grid{cellOf: map[string]Cell{}, nodes: map[string]*Node{}, tenant: map[string]*Tenant{}}
	byReimage := append([]*Tenant(nil), tenants...)
	sort.SliceStable(byReimage, func(i, j int) bool {
		if byReimage[i].ReimageRate != byReimage[j].ReimageRate {
			return byReimage[i].ReimageRate < byReimage[j].ReimageRate
		}
		return byReimage[i].ID < byReimage[j].ID
	})
	for col, group := range thirds(byReimage) {
		sort.SliceStable(group, func(i, j int) bool {
			if group[i].PeakCPU != group[j].PeakCPU {
				return group[i].PeakCPU < group[j].PeakCPU
			}
			return group[i].ID < group[j].ID
		})
		for row, cell := range thirds(group) {
			g.cells[row][col] = cell
			for _, t := range cell {
				g.cellOf[t.ID] = Cell{row, col}
			}
		}
	}
	for _, t := range tenants {
		g.tenant[t.ID] = t
		g.maxRate = max(g.maxRate, t.ReimageRate)
		for _, n := range t.Nodes {
			g.nodes[n.ID] = n
		}
	}
	return g
}

// thirds splits sorted tenants into three groups of about equal free space.
func thirds(ts []*Tenant) [Size][]*Tenant {
	var total int64
	for _, t := range ts {
		total += t.free()
	}
	var out [Size][]*Tenant
	var before int64
	for _, t := range ts {
		f := t.free()
		i := 0
		if total > 0 {
			i = int(float64(Size) * (float64(before) + float64(f)/2) / float64(total))
		}
		out[min(i, Size-1)] = append(out[min(i, Size-1)], t)
		before += f
	}
	return out
}

// CellOf returns a tenant's cell.
func (g *Grid) CellOf(tenant string) (Cell, bool) {
	c, ok := g.cellOf[tenant]
	return c, ok
}

// Node returns a node by ID.
func (g *Grid) Node(id string) (*Node, bool) {
	n, ok := g.nodes[id]
	return n, ok
}

// CellFree is the free space of each cell.
func (g *Grid) CellFree() [Size][Size]int64 {
	var out [Size][Size]int64
	for r := 0; r < Size; r++ {
		for c := 0; c < Size; c++ {
			for _, t := range g.cells[r][c] {
				out[r][c] += t.free()
			}
		}
	}
	return out
}
