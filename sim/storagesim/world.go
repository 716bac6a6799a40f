package storagesim

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// Tenant is a primary tenant as the storage simulation sees it: its servers
// and what Algorithm 2 knows of it from history.
type Tenant struct {
	ID          string // environment/function
	Environment string
	Servers     []string
	Racks       []string  // each server's rack, from an inventory ("" or none: laid out in racks of the run's size)
	ReimageRate float64   // reimages per server per month before the simulated span (the grid's column)
	PeakCPU     float64   // 95th percentile of its utilisation, percent (the grid's row)
	BusyHours   []float64 // share of each hour of the day it was busy (nodes.BusyHours); nil when unknown
}

// Datacenter is what a durability run replays: the tenants and the
// reimages of the simulated span.
type Datacenter struct {
	Name     string
	Start    time.Time // the simulated span begins here
	Tenants  []Tenant
	Reimages []history.Reimage // any order; every node must be a server of a tenant
	// Presence says when servers are in service; a server it does not name
	// is in service throughout.
	Presence map[string]Presence
}

// Presence is when a server is in service: from Joined (zero: from the
// start) to Retired (zero: to the end). A server takes no replica outside
// it, and a retiring server's replicas are moved off it first (HDFS's
// decommission), so a retirement loses nothing.
type Presence struct {
	Joined, Retired time.Time
}

// FromSynth turns a generated datacenter into a durability input: the
// first historyDays of its reimages (the profile's ReimageDays must cover
// them and the span) only give each tenant its reimage rate, as the blob
// tier computes it from history (nodes.ReimageRate); the reimages after
// them are replayed (with historyDays 0 the grid gets the generator's own
// rate, which it could not know). The peak is the 95th percentile of the
// tenant's series, and its busy hours the shares of each hour of the day
// at or above DefaultBusyThreshold, as blobd's tenantStats takes them.
func FromSynth(dc synth.Datacenter, historyDays int) Datacenter {
	tenants, replay := synthTenants(dc, historyDays)
	for i, t := range dc.Tenants {
		tenants[i].PeakCPU = nodes.PeakCPU(t.Series.Values) // as blobd takes it
		tenants[i].BusyHours = nodes.BusyHours(t.Series.Values, t.Series.Start, DefaultBusyThreshold())
	}
	return Datacenter{Name: dc.Profile.Name, Start: dc.Profile.Start.Add(time.Duration(historyDays) * 24 * time.Hour),
		Tenants: tenants, Reimages: replay}
}

// synthTenants is dc's tenants with the reimage rates of their first
// historyDays (the generator's own rate with 0) and no peak yet, and the
// reimages after those days.
func synthTenants(dc synth.Datacenter, historyDays int) (tenants []Tenant, replay []history.Reimage) {
	span := time.Duration(historyDays) * 24 * time.Hour
	start := dc.Profile.Start.Add(span)
	for _, t := range dc.Tenants {
		var past []history.Reimage
		for _, r := range t.Reimages {
			if r.Time.Before(start) {
				past = append(past, r)
			} else {
				replay = append(replay, r)
			}
		}
		rate := t.ReimageRate // no history: the generator's rate
		if historyDays > 0 {
			rate = nodes.ReimageRate(past, len(t.Nodes), span)
		}
		tenants = append(tenants, Tenant{ID: t.ID.String(), Environment: t.ID.Environment, Servers: t.Nodes, ReimageRate: rate})
	}
	return tenants, replay
}

// FromReimages builds a durability input from reimage events alone (the
// "reimages" CSV format of history/csvfmt): the servers are the nodes that
// had an event, so a real log, in which most nodes see none, makes a
// datacenter of failing nodes only: give FromInventory the inventory
// instead. Events in the first historyDays after start only give the
// tenants their reimage rates, the later ones are replayed. With
// historyDays 0 the rates come from the replayed events themselves (the
// grid then knows each tenant's rate in hindsight). The file says nothing of
// utilisation, so every tenant's peak is 0 and the grid's rows split the
// tenants by ID.
func FromReimages(name string, events map[history.TenantID][]history.Reimage, start time.Time, historyDays int) Datacenter {
	var inv []csvfmt.InventoryNode
	seen := map[string]bool{}
	for id, evs := range events {
		for _, r := range evs {
			if !seen[r.Node] {
				seen[r.Node] = true
				inv = append(inv, csvfmt.InventoryNode{Tenant: id, Node: r.Node})
			}
		}
	}
	dc, _ := FromInventory(name, inv, events, start, historyDays) // every event's node is in inv
	return dc
}

// FromInventory builds a durability input from a datacenter's inventory
// (every server with its tenant and, when known, its rack) and its reimage
// events, as FromReimages does: a server with no event is simply never
// reimaged, and counts in its tenant's rate. An event on a node the
// inventory does not list, or lists under another tenant, is an error.
func FromInventory(name string, inv []csvfmt.InventoryNode, events map[history.TenantID][]history.Reimage, start time.Time,
	historyDays int) (Datacenter, error) {
	tenantOf := make(map[string]history.TenantID, len(inv))
	servers := map[history.TenantID][]csvfmt.InventoryNode{}
	for _, n := range inv {
		tenantOf[n.Node] = n.Tenant
		servers[n.Tenant] = append(servers[n.Tenant], n)
	}
	for id, evs := range events {
		for _, r := range evs {
			if t, ok := tenantOf[r.Node]; !ok {
				return Datacenter{}, fmt.Errorf("reimage of node %s (tenant %s) at %s: the inventory does not list the node", r.Node, id, r.Time.Format(time.RFC3339))
			} else if t != id {
				return Datacenter{}, fmt.Errorf("reimage of node %s under tenant %s: the inventory lists it under %s", r.Node, id, t)
			}
		}
	}
	ids := make([]history.TenantID, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	span := time.Duration(historyDays) * 24 * time.Hour
	out := Datacenter{Name: name, Start: start.Add(span)}
	for _, id := range ids {
		nodesOf := servers[id]
		sort.Slice(nodesOf, func(i, j int) bool { return nodesOf[i].Node < nodesOf[j].Node })
		t := Tenant{ID: id.String(), Environment: id.Environment}
		for _, n := range nodesOf {
			t.Servers, t.Racks = append(t.Servers, n.Node), append(t.Racks, n.Rack)
		}
		var past, replay []history.Reimage
		for _, r := range events[id] {
			if r.Time.Before(out.Start) {
				past = append(past, r)
			} else {
				replay = append(replay, r)
			}
		}
		if historyDays > 0 {
			t.ReimageRate = nodes.ReimageRate(past, len(t.Servers), span)
		} else if len(replay) > 0 {
			last := slices.MaxFunc(replay, func(a, b history.Reimage) int { return a.Time.Compare(b.Time) }).Time
			t.ReimageRate = nodes.ReimageRate(replay, len(t.Servers), max(last.Sub(out.Start), 30*24*time.Hour))
		}
		out.Tenants = append(out.Tenants, t)
		out.Reimages = append(out.Reimages, replay...)
	}
	return out, nil
}

// FromLifetimes builds a durability input from a disk log
// (csvfmt.ParseLifetimes), which is the inventory too: every node it names
// is a server of its tenant (rack: its disks' first non-empty one). A disk
// failure wipes its server, as a reimage does (the failures of the first
// historyDays after the log's first day give the tenants their rates, as in
// FromInventory; the later ones are replayed). A server is in service from
// its first disk's first sighting to its last disk's last sighting; one
// last seen more than a day before the log ends is retired then.
func FromLifetimes(name string, disks []csvfmt.DiskLifetime, historyDays int) (Datacenter, error) {
	type life struct {
		tenant      history.TenantID
		rack        string
		first, last time.Time
	}
	lives := map[string]*life{}
	events := map[history.TenantID][]history.Reimage{}
	var start, end time.Time
	for _, d := range disks {
		l := lives[d.Node]
		if l == nil {
			l = &life{tenant: d.Tenant, first: d.FirstSeen, last: d.LastSeen}
			lives[d.Node] = l
		}
		if l.rack == "" {
			l.rack = d.Rack
		}
		l.first, l.last = minTime(l.first, d.FirstSeen), maxTime(l.last, d.LastSeen)
		if !d.Failed.IsZero() {
			events[d.Tenant] = append(events[d.Tenant], history.Reimage{Node: d.Node, Time: d.Failed})
		}
		if start.IsZero() || d.FirstSeen.Before(start) {
			start = d.FirstSeen
		}
		end = maxTime(end, d.LastSeen)
	}
	start = start.Truncate(24 * time.Hour)
	var inv []csvfmt.InventoryNode
	for node, l := range lives {
		inv = append(inv, csvfmt.InventoryNode{Tenant: l.tenant, Node: node, Rack: l.rack})
	}
	dc, err := FromInventory(name, inv, events, start, historyDays)
	if err != nil {
		return dc, err
	}
	dc.Presence = map[string]Presence{}
	for node, l := range lives {
		var p Presence
		if l.first.After(dc.Start) {
			p.Joined = l.first
		}
		if l.last.Before(end.Add(-24 * time.Hour)) {
			p.Retired = l.last
		}
		if p != (Presence{}) {
			dc.Presence[node] = p
		}
	}
	return dc, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// world is the datacenter as the placement policies see it: servers by
// position, racks, and Algorithm 2's grid built by the blob tier's own
// code (nodes.GridTenants, grid.Build).
type world struct {
	id       []string         // server position -> ID
	index    map[string]int32 // server ID -> position
	tenantOf []int32          // server position -> tenant position
	rackOf   []int32          // server position -> rack
	racks    [][]int32        // rack -> its servers
	grid     *grid.Grid
	gridNode []*grid.Node // server position -> its node in grid

	regs  []nodes.Node // what the grid is rebuilt from
	stats map[string]nodes.TenantStats
	// absent marks servers out of service now (Datacenter.Presence): they
	// take no replica (busy in the grid, full for stock placement).
	absent []bool
	// steering is given to every grid built (regrid).
	steering Steering
}

// Steering is the blob front's placement beyond Algorithm 2 (grid.Grid's
// options; the front's placement block): HourCandidates tenants of a cell
// compared by the hours of the day at which they were busy (0 or 1:
// Algorithm 2's random pick); SteerFirst, the first replica steered too;
// PickJointly, a block's rows chosen together.
type Steering struct {
	HourCandidates int
	SteerFirst     bool
	PickJointly    bool
}

// presenceEvents turns dc.Presence into the span's join and retire events,
// and takes out of service the servers not in service at its start.
func (w *world) presenceEvents(dc Datacenter, span time.Duration) ([]serverEvent, error) {
	var out []serverEvent
	for node, p := range dc.Presence {
		s, ok := w.index[node]
		if !ok {
			return nil, fmt.Errorf("presence of %s, which is no tenant's server", node)
		}
		joined, retired := p.Joined.Sub(dc.Start), p.Retired.Sub(dc.Start)
		if p.Joined.IsZero() {
			joined = 0
		}
		if p.Retired.IsZero() {
			retired = span
		}
		switch {
		case retired <= 0 || joined >= span || retired <= joined:
			w.setAbsent(s, true) // never in service within the span
		default:
			if joined > 0 {
				w.setAbsent(s, true)
				out = append(out, serverEvent{joined, s, joinEvent})
			}
			if retired < span {
				out = append(out, serverEvent{retired, s, retireEvent})
			}
		}
	}
	return out, nil
}

// setAbsent takes a server out of service or back.
func (w *world) setAbsent(server int32, absent bool) {
	w.absent[server] = absent
	w.gridNode[server].Busy = absent
}

// unlimited is a server's space when the run sets no capacity: nothing
// fills, and the grid's cells split the servers as equal empty disks.
const unlimited = 1 << 50

// buildWorld puts each server in its inventory rack, or else lays the
// tenants' servers into racks of rackSize, a tenant's servers side by side
// (a tenant's machines usually are neighbours), and clusters the tenants
// into the grid.
func buildWorld(tenants []Tenant, rackSize int) (*world, error) {
	if rackSize < 1 {
		return nil, fmt.Errorf("rack size must be at least 1, got %d", rackSize)
	}
	w := &world{index: map[string]int32{}, stats: map[string]nodes.TenantStats{}}
	named := map[string]int32{} // an inventory's racks
	var rackNames []string
	auto, filled := int32(-1), 0 // the rack being filled with servers of no known rack
	rackOf := func(name string) int32 {
		if name == "" {
			if auto < 0 || filled == rackSize {
				auto, filled = int32(len(w.racks)), 0
				label := fmt.Sprintf("rack-%d", len(w.racks))
				if _, clash := named[label]; clash {
					label += " (unlisted)"
				}
				w.racks, rackNames = append(w.racks, nil), append(rackNames, label)
			}
			filled++
			return auto
		}
		r, ok := named[name]
		if !ok {
			r, named[name] = int32(len(w.racks)), int32(len(w.racks))
			w.racks, rackNames = append(w.racks, nil), append(rackNames, name)
		}
		return r
	}
	for ti, t := range tenants {
		w.stats[t.ID] = nodes.TenantStats{ReimageRate: t.ReimageRate, PeakCPU: t.PeakCPU, BusyHours: t.BusyHours}
		for si, s := range t.Servers {
			if _, dup := w.index[s]; dup {
				return nil, fmt.Errorf("server %s belongs to two tenants", s)
			}
			name := ""
			if si < len(t.Racks) {
				name = t.Racks[si]
			}
			pos, rack := int32(len(w.id)), rackOf(name)
			w.index[s] = pos
			w.id = append(w.id, s)
			w.tenantOf = append(w.tenantOf, int32(ti))
			w.rackOf = append(w.rackOf, rack)
			w.racks[rack] = append(w.racks[rack], pos)
			w.regs = append(w.regs, nodes.Node{ID: s, Tenant: t.ID, Environment: t.Environment, Rack: rackNames[rack], Capacity: unlimited})
		}
	}
	if len(w.id) == 0 {
		return nil, fmt.Errorf("the datacenter has no servers")
	}
	w.absent = make([]bool, len(w.id))
	w.regrid(0, nil)
	return w, nil
}

// steer sets the grid's steering, now and for every grid regrid builds.
func (w *world) steer(s Steering) {
	w.steering = s
	w.grid.HourCandidates, w.grid.SteerFirst, w.grid.PickJointly = s.HourCandidates, s.SteerFirst, s.PickJointly
}

// regrid re-clusters the tenants by the space each server has left, as the
// blob front does after every catalogue scan (lines 4-5 of Algorithm 2: each
// cell holds about a ninth of the free space): capacity blocks per server
// (0: unlimited), used holding how many each server holds.
func (w *world) regrid(capacity int32, used []int32) {
	var usedBy map[string]int64
	if capacity > 0 {
		usedBy = make(map[string]int64, len(used))
		for i := range w.regs {
			w.regs[i].Capacity = int64(capacity)
			usedBy[w.id[i]] = int64(used[i])
		}
	}
	w.grid = grid.Build(nodes.GridTenants(w.regs, w.stats, usedBy, nil))
	w.steer(w.steering)
	w.gridNode = make([]*grid.Node, len(w.id))
	for i, id := range w.id {
		w.gridNode[i], _ = w.grid.Node(id)
		w.gridNode[i].Busy = w.absent[i]
	}
}
