package grid

// MaxJointCandidates is the most HourCandidates the blob front takes with
// PickJointly: a placement weighs up to candidates^3 combinations, under
// the front's lock (go test -bench Place10000 ./storage/grid).
const MaxJointCandidates = 10

// candidate is a node a pick may take, with its tenant.
type candidate struct {
	node   *Node
	tenant *Tenant
}

// pickJointly, with PickJointly and HourCandidates > 1, chooses together
// the replicas that complete the current round of the grid (every row and
// column not yet taken) when the request still needs that many; nil when
// it does not apply or finds no combination, and the picks go one at a
// time (pick). Algorithm 2 (lines 9-14) picks one replica at a time, so the
// replica the row rule sends among the highest peaks is as often chosen
// first, knowing nothing of the others, as last.
//
// A random pairing of the free columns with the free rows gives the cells:
// each set of cells equally often, as Algorithm 2's draw gives them when
// its diversity rules rarely dead-end it (with few environments or racks
// its redraws make the clashing sets rarer; here they come closer to
// equal, docs/simulator.md). HourCandidates eligible tenants are
// drawn in each cell, and of the combinations with distinct environments,
// racks and nodes the one kept is least often all busy at the same hour
// with the replicas already taken; among equals the first drawn, which
// keeps ties as random as Algorithm 2's draw (docs/simulator.md measured a
// tie-break by the pairs' overlap worse). Without SteerFirst and with no
// replica taken yet, one row keeps a single random draw, as Algorithm 2's
// first pick.
func (g *Grid) pickJointly(req Request, r *rules, needed int, rng Rand) []candidate {
	if !g.PickJointly || g.HourCandidates < 2 || r.relaxGrid {
		return nil
	}
	var rows, cols []int
	for i := 0; i < Size; i++ {
		if !r.rows[i] {
			rows = append(rows, i)
		}
		if !r.cols[i] {
			cols = append(cols, i)
		}
	}
	if len(rows) < 2 || len(rows) != len(cols) || needed < len(rows) {
		return nil
	}
	for i := len(cols) - 1; i > 0; i-- { // a random pairing of columns with rows
		j := rng.IntN(i + 1)
		cols[i], cols[j] = cols[j], cols[i]
	}
	drawn := make([][]candidate, len(rows))
	for i, row := range rows {
		tenants := g.cells[row][cols[i]]
		if len(tenants) == 0 {
			return nil
		}
		for k := 0; k < g.HourCandidates; k++ {
			if n, t := g.draw(tenants, req, r, rng); n != nil {
				drawn[i] = append(drawn[i], candidate{n, t})
			}
		}
		if len(drawn[i]) == 0 {
			return nil
		}
	}
	if !g.SteerFirst && len(r.nodes) == 0 {
		// Without SteerFirst a block's first replica is Algorithm 2's
		// random pick and only the others are steered: one row, at
		// random, keeps its first draw alone.
		j := rng.IntN(len(drawn))
		drawn[j] = drawn[j][:1]
	}
	var best []candidate
	bestAll := 0.0
	choice := make([]candidate, len(rows))
	var walk func(i int)
	walk = func(i int) {
		if i == len(rows) {
			if all := r.allBusyWith(choice); best == nil || all < bestAll {
				best, bestAll = append([]candidate(nil), choice...), all
			}
			return
		}
		for _, c := range drawn[i] {
			if r.compatible(c, choice[:i]) {
				choice[i] = c
				walk(i + 1)
			}
		}
	}
	walk(0)
	return best
}

// compatible says c keeps the diversity rules in force with the
// candidates chosen before it (those already taken are checked by draw).
func (r *rules) compatible(c candidate, chosen []candidate) bool {
	for _, o := range chosen {
		if c.node.ID == o.node.ID ||
			!r.relaxEnv && c.tenant.Environment == o.tenant.Environment ||
			!r.relaxRack && c.node.Rack != "" && c.node.Rack == o.node.Rack {
			return false
		}
	}
	return true
}

// allBusyWith is how many hours a day the replicas taken so far and
// chosen are all busy at once, expected: the one sum that overlap, the
// joint pick and AllBusyHours share.
func (r *rules) allBusyWith(chosen []candidate) float64 {
	sum := 0.0
	for h := 0; h < hoursPerDay; h++ {
		p := 1.0
		if r.allBusy != nil {
			p = r.allBusy[h]
		}
		for _, c := range chosen {
			p *= busyAt(c.tenant, h)
		}
		sum += p
	}
	return sum
}

// busyAt is the share of hour h of the day at which t was busy; a tenant
// without BusyHours counts as always busy.
func busyAt(t *Tenant, h int) float64 {
	if len(t.BusyHours) != hoursPerDay {
		return 1
	}
	return t.BusyHours[h]
}

// AllBusyHours is how many hours a day all of tenants are busy at once,
// expected from their BusyHours (a tenant without them counts as always
// busy): the hours a read of a block on them finds no replica to read.
func AllBusyHours(tenants []*Tenant) float64 {
	chosen := make([]candidate, len(tenants))
	for i, t := range tenants {
		chosen[i].tenant = t
	}
	var none rules // no replica taken: only the tenants count
	return none.allBusyWith(chosen)
}
