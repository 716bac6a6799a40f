package schedsim

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// jobTypes are the placer's job types, indexed by job.typ.
var jobTypes = [3]string{jobtype.Short, jobtype.Medium, jobtype.Long}

// taskMiB is each task's memory: the simulated servers are CPU-bound.
const taskMiB = 1024

type server struct {
	tenant  int
	class   int // index into the class table; -1 unclassified
	primary float64
	safe    [3]float64 // H: primary cores planned for short, medium, long jobs this slot
	used    int        // cores the running tasks hold
	running []*task
	guarded []guard.Task // running, as the driver's guard sees them
}

type task struct {
	job    *job
	dur    float64
	cores  int
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
	typ     int          // H: index into jobTypes, as the placer types it; -1 untyped
	cores   int          // per task (Config.TaskCores)
	classes map[int]bool // nil: any server
	pool    []int        // the servers of those classes
	pending []*task      // ready, waiting for a core
	queued  bool         // in the sim's queue
}

type finish struct {
	at  float64
	t   *task
	gen int
}

// finishedFirst orders finishes by time; ties are left to the queue.
func finishedFirst(a, b finish) bool { return a.at < b.at }

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
	events   *eventq.Queue[finish]
	arrived  int       // jobs that arrived
	times    []float64 // job times of the jobs done, in completion order
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
		return float64(s.cfg.Cores - sv.used)
	}
	return float64(s.cfg.Cores) - wholeCores(sv.primary) - float64(sv.used) - s.cfg.Reserve - s.cfg.margin
}

// wholeCores rounds a primary's use up to whole cores, as the driver's guard
// does (guard.RoundUp).
func wholeCores(cores float64) float64 { return guard.RoundUp(guard.Resources{CPU: cores}).CPU }

// safe is the room a task of j has if the primary rises to the level the
// placer's headroom plans for the job's type (H unless NoHistoryRanking): the
// server's class peak for long jobs, its average for medium ones, its
// current use for short ones, whichever is higher than now.
func (s *sim) safe(j *job, i int) float64 {
	sv := &s.servers[i]
	if j.typ < 0 || sv.class < 0 || s.cfg.NoHistoryRanking {
		return s.free(i)
	}
	return float64(s.cfg.Cores) - sv.safe[j.typ] - float64(sv.used) - s.cfg.Reserve - s.cfg.margin
}

// planSafe sets a server's planned primary use per job type for the slot:
// the level the placer's headroom (classify.Headroom) assumes, rounded up
// to whole cores as the driver rounds the primary.
func (s *sim) planSafe(sv *server) {
	c := &s.classes.table.Classes[sv.class]
	current := 100 * sv.primary / float64(s.cfg.Cores)
	for typ, name := range jobTypes {
		sv.safe[typ] = wholeCores((1 - classify.Headroom(classify.JobType(name), *c, current)) * float64(s.cfg.Cores))
	}
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
		if f < float64(j.cores) {
			continue
		}
		score := f
		if safe := s.safe(j, i); safe >= float64(j.cores) {
			score = 1000 + safe
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best >= 0 && !s.admits(best, j.cores) {
		return -1
	}
	return best
}

func (s *sim) startTask(t *task, i int) {
	t.server, t.start = i, s.now
	sv := &s.servers[i]
	sv.running = append(sv.running, t)
	sv.guarded = append(sv.guarded, guard.Task{ID: t.gid, Started: s.start.Add(time.Duration(t.start * float64(time.Second))),
		Alloc: guard.Resources{CPU: float64(t.cores), MemoryMiB: float64(t.cores) * taskMiB}})
	sv.used += t.cores
	s.events.Push(finish{at: s.now + t.dur, t: t, gen: t.gen})
}

func (s *sim) removeRunning(t *task) {
	sv := &s.servers[t.server]
	for k, r := range sv.running {
		if r == t {
			sv.running = append(sv.running[:k], sv.running[k+1:]...)
			sv.used -= t.cores
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
		for len(j.pending) > 0 && s.safe(j, i) >= float64(j.cores) && s.admits(i, j.cores) {
			s.startPending(j, i)
		}
		if len(j.pending) == 0 {
			s.dequeue(k)
		}
	}
}

// admits is the driver's admission check (PT, H) for one more task of
// cores cores.
func (s *sim) admits(i, cores int) bool {
	if s.cfg.Policy == Stock {
		return true
	}
	return guard.Admit(s.guardState(i), guard.Resources{CPU: s.servers[i].primary},
		guard.Hysteresis{AdmitMargin: guard.Resources{CPU: s.cfg.margin}},
		guard.Resources{CPU: float64(cores), MemoryMiB: float64(cores) * taskMiB}) == nil
}

// releaseStage makes a stage's tasks wait for cores. With TaskCores c > 1
// every c one-core tasks run as one c-core container as long as the longest
// of them (the paper's simulator scales container usage the same way to keep
// large datacenters fast; the job's critical path stays as it was).
func (s *sim) releaseStage(j *job) {
	durations := containers(j.spec.stages[j.stage], j.cores)
	for _, d := range durations {
		s.nextID++
		s.enqueue(&task{job: j, dur: d, cores: j.cores, gid: strconv.FormatInt(s.nextID, 10)})
	}
	j.left = len(durations)
	s.commit(j, j.left*j.cores)
}

func (s *sim) taskDone(f finish) {
	t := f.t
	s.removeRunning(t)
	j := t.job
	j.left--
	s.commit(j, -t.cores)
	if j.left == 0 {
		j.stage++
		if j.stage == len(j.spec.stages) {
			s.jobDone(j)
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
	clear(s.classes.primary)
	cores := float64(s.cfg.Cores)
	for ti, members := range s.byTenant {
		primary := s.series(ti, hist+n) / 100 * cores
		for _, i := range members {
			sv := &s.servers[i]
			sv.primary = primary
			prim += primary
			if sv.class >= 0 {
				s.classes.primary[sv.class] += primary
				if s.cfg.Policy == History {
					s.planSafe(sv)
				}
			}
			if sv.used > 0 && cores-wholeCores(primary)-float64(sv.used) < s.cfg.Reserve { // guard's Shortfall, without building its State
				if s.cfg.Policy == Stock {
					s.res.OverrunSlots++ // the harvested tasks sit in the primary's reserve
				} else {
					s.evict(i)
				}
			}
			used += math.Min(cores, primary+float64(sv.used))
		}
	}
	total := float64(len(s.servers)) * cores
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
				s.res.EvictedByPattern[s.patternOf(i)]++
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
