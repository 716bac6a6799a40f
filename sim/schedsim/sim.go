package schedsim

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
)

// taskMiB is each task's memory: the simulated servers are CPU-bound.
const taskMiB = 1024

type server struct {
	tenant  int
	class   int // index into the class table; -1 unclassified
	primary float64
	running []*task
	guarded []guard.Task // running, as the driver's guard sees them
}

type task struct {
	job    *job
	dur    float64
	start  float64
	server int
	gen    int    // bumped on eviction: the finish event of an evicted run is stale
	gid    string // the task's ID as the driver's guard sees it
}

type job struct {
	arrival float64
	spec    jobSpec
	stage   int
	left    int
	typ     string       // H: short, medium or long, as the placer types it
	classes map[int]bool // nil: any server
	pool    []int        // the servers of those classes
	done    float64
	pending []*task // ready, waiting for a core
	queued  bool    // in the sim's queue
}

type finish struct {
	at  float64
	t   *task
	gen int
}

type finishes []finish

func (f finishes) Len() int           { return len(f) }
func (f finishes) Less(i, j int) bool { return f[i].at < f[j].at }
func (f finishes) Swap(i, j int)      { f[i], f[j] = f[j], f[i] }
func (f *finishes) Push(x any)        { *f = append(*f, x.(finish)) }
func (f *finishes) Pop() any {
	old := *f
	x := old[len(old)-1]
	*f = old[:len(old)-1]
	return x
}

// sim is one run's state.
type sim struct {
	cfg      Config
	rng      *rand.Rand
	servers  []server
	byTenant [][]int // servers of each tenant
	classes  *classView
	queue    []*job // jobs with pending tasks, oldest first; nil where one left
	unplaced []*job // H: jobs Algorithm 1 found no room for yet
	gone     int    // nil entries in queue
	events   finishes
	jobs     []*job
	nextID   int64
	now      float64
	start    time.Time // of the simulated span, for guard's task ages
	res      Result
	util     float64 // sum over slots of the cluster's utilisation
	primUtil float64
	slots    int
}

func (s *sim) capacity() guard.Resources {
	return guard.Resources{CPU: float64(s.cfg.Cores), MemoryMiB: s.cfg.MemoryMiB}
}

// free is the room a new task has on a server under the policy: the cores
// the primary's current use, the running tasks, the reserve and the
// driver's margin leave.
func (s *sim) free(i int) float64 {
	sv := &s.servers[i]
	if s.cfg.Policy == Stock {
		return float64(s.cfg.Cores - len(sv.running))
	}
	return float64(s.cfg.Cores) - math.Ceil(sv.primary-1e-9) - float64(len(sv.running)) - s.cfg.Reserve - s.cfg.margin
}

// safe is the room a task of j has if the primary rises to the level the
// placer's headroom plans for the job's type (H unless NoHistoryRanking): the
// server's class peak for long jobs, its average for medium ones, its
// current use for short ones, whichever is higher than now.
func (s *sim) safe(j *job, i int) float64 {
	sv := &s.servers[i]
	if j.typ == "" || sv.class < 0 || s.cfg.NoHistoryRanking {
		return s.free(i)
	}
	c := s.classes.table.Classes[sv.class]
	current := 100 * sv.primary / float64(s.cfg.Cores)
	expected := (1 - classify.Headroom(classify.JobType(j.typ), c, current)) * float64(s.cfg.Cores)
	return float64(s.cfg.Cores) - math.Ceil(expected-1e-9) - float64(len(sv.running)) - s.cfg.Reserve - s.cfg.margin
}

func (s *sim) allowed(j *job, i int) bool {
	return j.classes == nil || !s.cfg.ClassConstraint || j.classes[s.servers[i].class]
}

func (s *sim) guardState(i int) guard.State {
	sv := &s.servers[i]
	return guard.State{Capacity: s.capacity(), Reserve: guard.Resources{CPU: s.cfg.Reserve},
		Primary: guard.Resources{CPU: sv.primary}, Tasks: sv.guarded}
}

// pick samples servers the job may use and returns the one with the most
// room, or -1; under H (unless NoHistoryRanking) servers where the job's type is
// safe come first. For PT and H the choice is confirmed by the driver's own
// admission check (guard.Admit with the primary's current use).
func (s *sim) pick(j *job) int {
	if i := s.pickFrom(j, j.pool); i >= 0 || j.pool == nil || s.cfg.ClassConstraint {
		return i
	}
	return s.pickFrom(j, nil) // the classes are a preference: any server will do
}

func (s *sim) pickFrom(j *job, pool []int) int {
	best, bestScore := -1, 0.0
	for k := 0; k < 24; k++ {
		var i int
		if pool != nil {
			i = pool[s.rng.IntN(len(pool))]
		} else {
			i = s.rng.IntN(len(s.servers))
		}
		f := s.free(i)
		if f < 1 {
			continue
		}
		score := f
		if safe := s.safe(j, i); safe >= 1 {
			score = 1000 + safe
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best >= 0 && !s.admits(best) {
		return -1
	}
	return best
}

func (s *sim) startTask(t *task, i int) {
	t.server, t.start = i, s.now
	sv := &s.servers[i]
	sv.running = append(sv.running, t)
	sv.guarded = append(sv.guarded, guard.Task{ID: t.gid, Started: s.start.Add(time.Duration(t.start * float64(time.Second))),
		Alloc: guard.Resources{CPU: 1, MemoryMiB: taskMiB}})
	heap.Push(&s.events, finish{at: s.now + t.dur, t: t, gen: t.gen})
}

func (s *sim) removeRunning(t *task) {
	sv := &s.servers[t.server]
	for k, r := range sv.running {
		if r == t {
			sv.running = append(sv.running[:k], sv.running[k+1:]...)
			sv.guarded = append(sv.guarded[:k], sv.guarded[k+1:]...)
			return
		}
	}
}

// enqueue makes a task wait for a core, behind the jobs already waiting.
func (s *sim) enqueue(t *task) {
	j := t.job
	j.pending = append(j.pending, t)
	if !j.queued {
		j.queued = true
		s.queue = append(s.queue, j)
	}
}

// dequeue takes a job that has nothing left to place off the queue.
func (s *sim) dequeue(k int) {
	s.queue[k].queued = false
	s.queue[k] = nil
	s.gone++
	if s.gone > 64 && s.gone > len(s.queue)/2 {
		out := s.queue[:0]
		for _, j := range s.queue {
			if j != nil {
				out = append(out, j)
			}
		}
		clear(s.queue[len(out):])
		s.queue, s.gone = out, 0
	}
}

func (s *sim) startPending(j *job, i int) {
	t := j.pending[0]
	j.pending[0] = nil
	j.pending = j.pending[1:]
	s.startTask(t, i)
}

// place starts waiting tasks, oldest job first, until 32 jobs in a row
// find no room.
func (s *sim) place() {
	misses := 0
	for k := 0; k < len(s.queue) && misses < 32; k++ {
		j := s.queue[k]
		if j == nil {
			continue
		}
		for len(j.pending) > 0 {
			i := s.pick(j)
			if i < 0 {
				misses++
				break
			}
			s.startPending(j, i)
			misses = 0
		}
		if len(j.pending) == 0 {
			s.dequeue(k)
		}
	}
}

// placeOn gives a server that just freed a core to the oldest waiting jobs
// allowed there.
func (s *sim) placeOn(i int) {
	looked := 0
	for k := 0; k < len(s.queue) && looked < 64 && s.free(i) >= 1; k++ {
		j := s.queue[k]
		if j == nil {
			continue
		}
		looked++
		if !s.allowed(j, i) {
			continue
		}
		for len(j.pending) > 0 && s.safe(j, i) >= 1 && s.admits(i) {
			s.startPending(j, i)
		}
		if len(j.pending) == 0 {
			s.dequeue(k)
		}
	}
}

// admits is the driver's admission check (PT, H) for one more task.
func (s *sim) admits(i int) bool {
	if s.cfg.Policy == Stock {
		return true
	}
	return guard.Admit(s.guardState(i), guard.Resources{CPU: s.servers[i].primary},
		guard.Hysteresis{AdmitMargin: guard.Resources{CPU: s.cfg.margin}},
		guard.Resources{CPU: 1, MemoryMiB: taskMiB}) == nil
}

func (s *sim) releaseStage(j *job) {
	for _, d := range j.spec.stages[j.stage] {
		s.nextID++
		s.enqueue(&task{job: j, dur: d, gid: strconv.FormatInt(s.nextID, 10)})
	}
	j.left = len(j.spec.stages[j.stage])
	s.commit(j, j.left)
}

func (s *sim) taskDone(f finish) {
	t := f.t
	s.removeRunning(t)
	j := t.job
	j.left--
	s.commit(j, -1)
	if j.left == 0 {
		j.stage++
		if j.stage == len(j.spec.stages) {
			j.done = s.now
		} else {
			s.releaseStage(j)
		}
	}
	s.placeOn(t.server)
}

// slot moves every server's primary to slot n and lets the driver's guard
// evict what breaks the reserve (PT, H); under stock it counts the
// server-slots where harvested tasks left the primary short of its reserve.
func (s *sim) slot(n int) {
	hist := s.cfg.HistoryDays * history.SlotsPerDay
	var used, prim float64
	if s.classes != nil {
		clear(s.classes.primary)
	}
	for i := range s.servers {
		sv := &s.servers[i]
		u := s.series(sv.tenant, hist+n)
		sv.primary = u / 100 * float64(s.cfg.Cores)
		prim += sv.primary
		if s.classes != nil && sv.class >= 0 {
			s.classes.primary[sv.class] += sv.primary
		}
		if len(sv.running) > 0 && float64(s.cfg.Cores)-math.Ceil(sv.primary-1e-9)-float64(len(sv.running)) < s.cfg.Reserve {
			if s.cfg.Policy == Stock {
				s.res.OverrunSlots++ // the harvested tasks sit in the primary's reserve
			} else {
				s.evict(i)
			}
		}
		used += math.Min(float64(s.cfg.Cores), sv.primary+float64(len(sv.running)))
	}
	total := float64(len(s.servers) * s.cfg.Cores)
	s.util += used / total
	s.primUtil += prim / total
	s.slots++
}

func (s *sim) evict(i int) {
	d := guard.Evictions(s.guardState(i))
	for _, g := range d.Evict {
		for _, t := range s.servers[i].running {
			if t.gid == g.ID {
				s.removeRunning(t)
				s.res.Evicted++
				s.res.WastedTaskSeconds += s.now - t.start
				c := s.classResult(t.job.spec.class)
				c.Evicted++
				c.WastedTaskSeconds += s.now - t.start
				s.res.EvictedByPattern[t.job.spec.class+"@"+s.patternOf(i)]++
				t.gen++
				s.enqueue(t) // re-run from the start, elsewhere if it must
				break
			}
		}
	}
}

func (s *sim) patternOf(i int) string {
	if c := s.servers[i].class; c >= 0 {
		return string(s.classes.table.Classes[c].Pattern)
	}
	return "unclassified"
}

func (s *sim) series(tenant, slot int) float64 {
	v := s.cfg.Tenants[tenant].Series.Values[slot]
	if math.IsNaN(v) {
		return 0
	}
	return Scale(s.cfg.Scaling, s.cfg.Factor, v)
}
