package schedsim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// jobTypes are the placer's job types, indexed by job.typ.
var jobTypes = [3]string{jobtype.Short, jobtype.Medium, jobtype.Long}

type server struct {
	tenant  int
	class   int          // index into the class table; -1 unclassified
	primary float64      // cores the primary uses this slot
	held    []*container // one-core containers on it, busy or idle
	// absent: its tenant's history has not begun (a tenant that joins the
	// cluster late); it takes no containers and counts in no capacity
	absent bool
}

// finish is the end of a container's task, or (idle) of its idle time, or
// (release) of a job's wait for its next stage (Config.StageDelay).
type finish struct {
	at      float64
	c       *container
	gen     int
	idle    bool
	release *job
}

// finishedFirst orders finishes by time; ties are left to the queue.
func finishedFirst(a, b finish) bool { return a.at < b.at }

// sim is one run's state.
type sim struct {
	cfg       Config
	rng       *rand.Rand
	servers   []server // grouped by class: classRange[c] holds class c's
	byTenant  [][]int  // servers of each tenant
	joined    []int    // each tenant's first measured slot: its servers are absent before it
	tenantCPU []float64
	classes   *classView
	room      *fenwick        // containers each server can still take
	open      *fenwick        // 1 where a server can take one (Binpack2 draws among these)
	heartbeat *heartbeatOrder // with Unlabelled = Heartbeat
	waiting   waitQueues
	unfit     []*job // HoldUnfit: jobs Algorithm 1 found no room for yet
	events    *eventq.Queue[finish]
	scale     float64 // JobScale in effect
	arrived   int
	jobs      []*job // in the system (arrived, not done)
	times     []float64
	nextID    int64
	now       float64
	start     time.Time // of the simulated span, for the guard's task ages
	busy      int       // containers running a task, cluster-wide
	res       Result
	util      float64 // sum over slots of the cluster's utilisation
	primUtil  float64
	slots     int
	survival  *survivalCounts
}

// capacityRoom is a server's free whole containers under the policy: stock
// ignores the primary; PT and H keep the rounded primary, the reserve and
// the admission margin free (the driver's guard.Admit, without memory).
func (s *sim) capacityRoom(i int) int64 {
	sv := &s.servers[i]
	if sv.absent {
		return 0
	}
	free := float64(s.cfg.Cores - len(sv.held))
	if s.cfg.Policy != Stock {
		free -= wholeCores(sv.primary) + s.cfg.Reserve + s.cfg.AdmitMargin
	}
	return int64(max(0, math.Floor(free+1e-9)))
}

// wholeCores rounds a primary's use up to whole cores, as the driver's guard
// does (guard.RoundUp).
func wholeCores(cores float64) float64 { return guard.RoundUp(guard.Resources{CPU: cores}).CPU }

// refresh brings a server's weights in the trees up to date.
func (s *sim) refresh(i int) {
	r := s.capacityRoom(i)
	s.room.set(i, r)
	s.open.set(i, min(r, 1))
	if s.heartbeat != nil {
		s.heartbeat.open.set(s.heartbeat.pos[i], min(r, 1))
	}
}

// pick draws a server with room for one container within ranges (nil:
// every server), by the configured placement; -1 when none has room.
func (s *sim) pick(ranges [][2]int) int {
	placement := s.cfg.Placement
	if ranges == nil {
		placement = s.cfg.Unlabelled
	}
	if placement == Heartbeat {
		return s.heartbeat.next()
	}
	tree := s.room
	if placement == Binpack2 {
		tree = s.open
	}
	a := s.draw(tree, ranges)
	if a < 0 || placement != Binpack2 {
		return a
	}
	b := s.draw(tree, ranges)
	if s.room.w[b] < s.room.w[a] { // binpack: the fuller of the two
		return b
	}
	return a
}

// heartbeatOrder is YARN's heartbeat fill: servers in a fixed order (their
// heartbeats'), the current one filled with what it can take before the
// next with room is offered.
type heartbeatOrder struct {
	order  []int    // server at each position
	pos    []int    // position of each server
	open   *fenwick // 1 at a position whose server has room
	cursor int      // the position being filled
}

func newHeartbeatOrder(servers int, seed uint64) *heartbeatOrder {
	h := &heartbeatOrder{order: rand.New(rand.NewPCG(seed, 0x4ea7)).Perm(servers), pos: make([]int, servers), open: newFenwick(servers)}
	for p, i := range h.order {
		h.pos[i] = p
	}
	return h
}

// next is the server at the cursor, or the next one after it with room
// (wrapping), which becomes the cursor; -1 when none has room.
func (h *heartbeatOrder) next() int {
	total := h.open.prefix(len(h.order))
	if total == 0 {
		return -1
	}
	before := h.open.prefix(h.cursor)
	if before == total {
		before = 0
	}
	h.cursor = h.open.find(before)
	return h.order[h.cursor]
}

// draw picks an index of tree within ranges with probability proportional
// to its weight.
func (s *sim) draw(tree *fenwick, ranges [][2]int) int {
	if ranges == nil {
		total := tree.prefix(len(s.servers))
		if total == 0 {
			return -1
		}
		return tree.find(s.rng.Int64N(total))
	}
	var total int64
	for _, r := range ranges {
		total += tree.sum(r[0], r[1])
	}
	if total == 0 {
		return -1
	}
	u := s.rng.Int64N(total)
	for _, r := range ranges {
		w := tree.sum(r[0], r[1])
		if u < w {
			return tree.find(tree.prefix(r[0]) + u)
		}
		u -= w
	}
	return -1
}

// slot moves every server's primary to slot n and lets the driver's guard
// evict what breaks the reserve (PT, H); under stock it counts the
// server-slots where harvested containers left the primary short of its
// reserve. Servers that gained room then serve the waiting jobs.
func (s *sim) slot(n int) {
	hist := s.cfg.HistoryDays * history.SlotsPerDay
	cores := float64(s.cfg.Cores)
	var prim float64
	var grew []int
	present := 0
	for ti, members := range s.byTenant {
		primary, here := s.seriesAt(ti, hist+n)
		primary = primary / 100 * cores
		if here {
			prim += primary * float64(len(members))
			present += len(members)
		}
		if primary == s.tenantCPU[ti] && here == !s.servers[members[0]].absent {
			continue
		}
		changed := s.tenantCPU[ti] < 0 || wholeCores(primary) != wholeCores(s.tenantCPU[ti]) || here == s.servers[members[0]].absent
		s.tenantCPU[ti] = primary
		for _, i := range members {
			sv := &s.servers[i]
			sv.primary, sv.absent = primary, !here
			if !here && len(sv.held) > 0 { // a tenant that left takes its servers with it
				s.refresh(i) // no room: what the kills put back goes elsewhere
				for len(sv.held) > 0 {
					s.kill(sv.held[len(sv.held)-1])
				}
			}
			if !changed {
				continue
			}
			if s.cfg.Policy != Stock && len(sv.held) > 0 && cores-wholeCores(primary)-float64(len(sv.held)) < s.cfg.Reserve-1e-9 {
				s.evict(i) // the guard's Shortfall, without building its State for every server
			}
			before := s.room.w[i]
			s.refresh(i)
			if s.room.w[i] > before {
				grew = append(grew, i)
			}
		}
	}
	if s.cfg.Policy == Stock { // harvested containers sitting in the primary's reserve
		for ti, members := range s.byTenant {
			for _, i := range members {
				if n := len(s.servers[i].held); n > 0 && cores-wholeCores(s.tenantCPU[ti])-float64(n) < s.cfg.Reserve-1e-9 {
					s.res.OverrunSlots++
				}
			}
		}
	}
	s.rng.Shuffle(len(grew), func(a, b int) { grew[a], grew[b] = grew[b], grew[a] })
	for _, i := range grew {
		s.offer(i)
	}
	total := float64(max(1, present)) * cores
	s.util += math.Min(1, (prim+float64(s.busy))/total)
	s.primUtil += prim / total
	s.slots++
}

// evict runs the driver's guard over a server's containers and kills the
// youngest until the reserve is back (guard.Evictions).
func (s *sim) evict(i int) {
	sv := &s.servers[i]
	state := guard.State{Capacity: guard.Resources{CPU: float64(s.cfg.Cores)}, Reserve: guard.Resources{CPU: s.cfg.Reserve},
		Primary: guard.Resources{CPU: sv.primary}, Tasks: make([]guard.Task, len(sv.held))}
	held := append([]*container(nil), sv.held...) // kill changes sv.held
	for k, c := range held {
		state.Tasks[k] = guard.Task{ID: c.id, Started: s.start.Add(time.Duration(c.start * float64(time.Second))),
			Alloc: guard.Resources{CPU: 1}}
	}
	for _, t := range guard.Evictions(state).Evict {
		for _, c := range held { // a server holds at most its cores
			if c.id == t.ID {
				s.kill(c)
				break
			}
		}
	}
}

func (s *sim) series(tenant, slot int) float64 {
	v, _ := s.seriesAt(tenant, slot)
	return v
}

// seriesAt is a tenant's scaled utilisation (percent) at a slot, and
// whether its history has begun there: a NaN before its first sample is a
// tenant that has not joined yet (0, false); a NaN after it, a gap (0).
func (s *sim) seriesAt(tenant, slot int) (float64, bool) {
	v := s.cfg.Tenants[tenant].Series.Values[slot]
	if math.IsNaN(v) {
		return 0, slot >= s.joined[tenant]
	}
	return Scale(s.cfg.Scaling, s.cfg.Factor, v), true
}

// waitQueues hold the jobs with tasks waiting for a container, oldest
// first: YARN's schedulers serve applications in the order they came, so a
// job's new stage and its evicted work keep the job's place. A job that
// names classes waits in each of its classes' queues, one that names none
// in the queue any server serves.
type waitQueues struct {
	byClass []*eventq.Queue[waitEntry] // the last one: unclassified servers (serves only any)
	any     *eventq.Queue[waitEntry]
}

type waitEntry struct {
	j   *job
	ver int
}

func olderFirst(a, b waitEntry) bool { return a.j.seq < b.j.seq }

func newWaitQueues(classes int) waitQueues {
	w := waitQueues{any: eventq.New(olderFirst)}
	for c := 0; c < classes; c++ {
		w.byClass = append(w.byClass, eventq.New(olderFirst))
	}
	return w
}

// head is the oldest job still waiting in q (stale entries dropped).
func head(q *eventq.Queue[waitEntry]) *job {
	for q.Len() > 0 {
		e := q.Peek()
		if e.j.waiting && e.ver == e.j.wver {
			return e.j
		}
		q.Pop()
	}
	return nil
}

// startWaiting queues a job with unplaced tasks.
func (s *sim) startWaiting(j *job) {
	if j.waiting {
		return
	}
	j.waiting = true
	j.wver++
	e := waitEntry{j, j.wver}
	if j.classes == nil || !s.cfg.ClassConstraint {
		s.waiting.any.Push(e)
		return
	}
	for _, c := range j.classes {
		s.waiting.byClass[c].Push(e)
	}
}

// oldestFor is the oldest waiting job a server of class c may run.
func (s *sim) oldestFor(c int) *job {
	a := head(s.waiting.any)
	if c < 0 {
		return a
	}
	b := head(s.waiting.byClass[c])
	if a == nil || b != nil && b.seq < a.seq {
		return b
	}
	return a
}

// offer gives a server's room to the oldest waiting jobs allowed there, as
// a heartbeating node is filled.
func (s *sim) offer(i int) {
	for s.room.w[i] > 0 {
		j := s.oldestFor(s.servers[i].class)
		if j == nil {
			return
		}
		s.grant(j, i)
	}
}
