package grid

import (
	"errors"
	"fmt"
	"strings"
)

// Rand is the random source (math/rand/v2's *Rand satisfies it).
type Rand interface{ IntN(n int) int }

// Request asks for replicas of one object.
type Request struct {
	Size     int64
	Replicas int
	Writer   string // the writing node's ID, "" when the writer is not a storage node
	// Existing replicas (node IDs) the new ones must be diverse from: a
	// repair places the missing replicas of a block around its survivors.
	Existing []string
	// Strict refuses a placement that cannot keep every diversity rule;
	// otherwise rules are relaxed (rows/columns, then racks, then
	// environments) and the placement is marked degraded.
	Strict bool
}

// Placement is where the replicas go.
type Placement struct {
	Nodes    []string
	Cells    []Cell
	Degraded bool
	Reason   string // why it is degraded
}

// ErrNoSpace says fewer nodes than replicas can take the object at all.
var ErrNoSpace = errors.New("not enough storage nodes with free space")

// ErrNotDiverse says a strict request could not keep the diversity rules.
var ErrNotDiverse = errors.New("replicas cannot be placed diversely")

// rules are the diversity constraints in force for the next pick.
type rules struct {
	rows, cols  map[int]bool
	envs, racks map[string]bool
	nodes       map[string]bool
	relaxGrid   bool // rows/columns may repeat
	relaxRack   bool
	relaxEnv    bool
	// allBusy is, for each hour of the day, the chance that every replica
	// taken so far is busy then (the product of their tenants' BusyHours;
	// a tenant without them counts as always busy); nil until a replica's
	// tenant has BusyHours.
	allBusy []float64
}

// take marks a replica's node, cell, environment and rack as used.
func (r *rules) take(n *Node, t *Tenant, c Cell) {
	r.rows[c.Row], r.cols[c.Col] = true, true
	r.envs[t.Environment], r.nodes[n.ID] = true, true
	if n.Rack != "" {
		r.racks[n.Rack] = true
	}
	if len(t.BusyHours) != hoursPerDay {
		return // counts as always busy: a factor of 1
	}
	if r.allBusy == nil {
		r.allBusy = make([]float64, hoursPerDay)
		for h := range r.allBusy {
			r.allBusy[h] = 1
		}
	}
	for h, p := range t.BusyHours {
		r.allBusy[h] *= p
	}
}

const hoursPerDay = 24

// overlap is how many hours a day every replica taken so far and t would
// all be busy at once, expected: what a read that finds every replica busy
// depends on. With no replica taken, it is how many hours a day t is busy.
func (r *rules) overlap(t *Tenant) float64 {
	return r.allBusyWith([]candidate{{tenant: t}})
}

func (r *rules) cellOK(row, col int) bool {
	return r.relaxGrid || (!r.rows[row] && !r.cols[col])
}

func (g *Grid) nodeOK(n *Node, t *Tenant, req Request, r *rules) bool {
	return !n.Busy && n.Free >= req.Size && !r.nodes[n.ID] &&
		(r.relaxRack || n.Rack == "" || !r.racks[n.Rack]) &&
		(r.relaxEnv || !r.envs[t.Environment])
}

// diverseAttempts is how many times Place draws a whole placement before
// it relaxes a rule. Beyond the paper: its greedy draw can dead-end (the
// first replica takes the only row another column offers) although a fully
// diverse placement exists, which small clusters hit often; redrawing keeps
// the paper's distribution and finds one when it exists, nearly always.
const diverseAttempts = 8

// Place picks nodes for one object (lines 6-18 of Algorithm 2). It does not
// reserve space: call Commit once the replicas are written.
func (g *Grid) Place(req Request, rng Rand) (Placement, error) {
	if req.Replicas < 1 {
		return Placement{}, fmt.Errorf("replicas must be at least 1, got %d", req.Replicas)
	}
	strict := req
	strict.Strict = true // a strict draw fails with ErrNotDiverse, never ErrNoSpace
	for attempt := 1; attempt < diverseAttempts; attempt++ {
		if p, err := g.placeOnce(strict, rng); err == nil {
			return p, nil
		}
	}
	return g.placeOnce(req, rng)
}

func (g *Grid) placeOnce(req Request, rng Rand) (Placement, error) {
	r := &rules{rows: map[int]bool{}, cols: map[int]bool{}, envs: map[string]bool{}, racks: map[string]bool{}, nodes: map[string]bool{}}
	var p Placement
	var relaxed []string
	take := func(n *Node, t *Tenant) {
		c := g.cellOf[t.ID]
		p.Nodes, p.Cells = append(p.Nodes, n.ID), append(p.Cells, c)
		r.take(n, t, c)
	}
	for _, id := range req.Existing {
		if n, ok := g.nodes[id]; ok {
			r.take(n, g.tenant[n.Tenant], g.cellOf[n.Tenant])
		}
	}
	for i := 0; i < req.Replicas; i++ {
		if total := i + len(req.Existing); total > 0 && total%Size == 0 { // lines 15-16: a new round forgets rows and columns
			r.rows, r.cols = map[int]bool{}, map[int]bool{}
		}
		if i == 0 && req.Writer != "" { // lines 6-7: the writer's own server first
			if n, ok := g.nodes[req.Writer]; ok && g.nodeOK(n, g.tenant[n.Tenant], req, r) {
				take(n, g.tenant[n.Tenant])
				continue
			}
		}
		if picked := g.pickJointly(req, r, req.Replicas-i, rng); picked != nil {
			for _, c := range picked {
				take(c.node, c.tenant)
			}
			i += len(picked) - 1
			continue
		}
		n, t := g.pick(req, r, rng)
		for _, relax := range []struct {
			flag *bool
			what string
		}{{&r.relaxGrid, "rows/columns"}, {&r.relaxRack, "racks"}, {&r.relaxEnv, "environments"}} {
			if n != nil {
				break
			}
			if req.Strict {
				return Placement{}, fmt.Errorf("%w: replica %d of %d has no cell with a free row and column, a new environment and rack, and %d free bytes",
					ErrNotDiverse, i+1, req.Replicas, req.Size)
			}
			*relax.flag = true
			relaxed = append(relaxed, relax.what)
			n, t = g.pick(req, r, rng)
		}
		if n == nil {
			return Placement{}, fmt.Errorf("%w: %d of %d replicas found room for %d bytes", ErrNoSpace, i, req.Replicas, req.Size)
		}
		take(n, t)
	}
	if len(relaxed) > 0 {
		p.Degraded = true
		p.Reason = "diversity relaxed: repeated " + strings.Join(relaxed, ", then ")
	}
	return p, nil
}

// pick chooses a random allowed cell with an eligible tenant, a random
// eligible tenant of it and a random eligible node of that tenant
// (lines 9-14). Beyond the paper, with HourCandidates > 1 and replicas
// already taken, it draws that many eligible tenants of the cell and keeps
// the one least often busy at the same hours as those replicas; with
// SteerFirst, before any replica, the one least often busy.
func (g *Grid) pick(req Request, r *rules, rng Rand) (*Node, *Tenant) {
	var cells []Cell
	for row := 0; row < Size; row++ {
		for col := 0; col < Size; col++ {
			if r.cellOK(row, col) && len(g.cells[row][col]) > 0 {
				cells = append(cells, Cell{row, col})
			}
		}
	}
	for len(cells) > 0 {
		ci := rng.IntN(len(cells))
		c := cells[ci]
		tenants := g.cells[c.Row][c.Col]
		n, t := g.draw(tenants, req, r, rng)
		if n == nil {
			cells = append(cells[:ci], cells[ci+1:]...) // nothing eligible in this cell
			continue
		}
		if g.HourCandidates > 1 && (r.allBusy != nil || g.SteerFirst && len(r.nodes) == 0) {
			best := r.overlap(t)
			for k := 1; k < g.HourCandidates; k++ {
				if n2, t2 := g.draw(tenants, req, r, rng); n2 != nil {
					if o := r.overlap(t2); o < best {
						n, t, best = n2, t2, o
					}
				}
			}
		}
		return n, t
	}
	return nil, nil
}

// draw is an eligible node of a random eligible tenant of tenants, nil
// when there is none.
func (g *Grid) draw(tenants []*Tenant, req Request, r *rules, rng Rand) (*Node, *Tenant) {
	start := rng.IntN(len(tenants))
	for k := range tenants {
		t := tenants[(start+k)%len(tenants)]
		if !r.relaxEnv && r.envs[t.Environment] {
			continue
		}
		if len(t.Nodes) == 0 {
			continue
		}
		ns := rng.IntN(len(t.Nodes))
		for m := range t.Nodes {
			if n := t.Nodes[(ns+m)%len(t.Nodes)]; g.nodeOK(n, t, req, r) {
				return n, t
			}
		}
	}
	return nil, nil
}

// Commit takes an object's size off the nodes that now hold it.
func (g *Grid) Commit(p Placement, size int64) {
	for _, id := range p.Nodes {
		if n, ok := g.nodes[id]; ok {
			n.Free -= size
		}
	}
}
