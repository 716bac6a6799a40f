package escalsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/placer/escalation"
	"github.com/harvest-platform/harvest/placer/greylist"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// Config is one run's policy.
type Config struct {
	Name      string        // a label for the result
	Escalate  bool          // false: strict classes
	Delay     time.Duration // escalation's delay per step
	Chosen    int           // classes Algorithm 1 chose per job (0: 1)
	Extra     int           // classes added at the more-classes step (0: 1)
	Greylist  bool          // keep nodes with Threshold node faults from new tasks
	Threshold int           // 0: 3
	Reset     time.Duration // the counters start over this often (0: 6 h)
	Seed      uint64
}

// Result is one run's outcome; times are seconds. A job's wait runs from
// its arrival until each of its tasks has started once, its completion
// until every task has succeeded.
type Result struct {
	Name            string  `json:"name"`
	Jobs            int     `json:"jobs"`
	Finished        int     `json:"finished"`
	MeanWait        float64 `json:"mean_wait_seconds"`
	P90Wait         float64 `json:"p90_wait_seconds"`
	MeanCompletion  float64 `json:"mean_completion_seconds"`
	P90Completion   float64 `json:"p90_completion_seconds"`
	Placements      int     `json:"placements"`
	FlakyPlacements int     `json:"placements_on_flaky_nodes"`
	LostToFaults    int     `json:"tasks_lost_to_node_faults"`
	Evictions       int     `json:"evictions"`
	OutOfClass      int     `json:"placements_outside_chosen_classes"`
	EscalatedJobs   int     `json:"jobs_placed_outside_chosen_classes"`
	GreylistedMax   int     `json:"greylisted_max"`
	Makespan        float64 `json:"makespan_seconds"`
}

type kind uint8

const (
	done kind = iota
	fault
	evict
	wake
)

type event struct {
	t    time.Duration
	kind kind
	node int32
	job  int32
	task int32
}

// eventOrder orders events by time, then by their other fields (kind, job,
// task, node), never by when they were queued, so that runs are
// deterministic.
func eventOrder(x, y event) bool {
	switch {
	case x.t != y.t:
		return x.t < y.t
	case x.kind != y.kind:
		return x.kind < y.kind
	case x.job != y.job:
		return x.job < y.job
	case x.task != y.task:
		return x.task < y.task
	}
	return x.node < y.node
}

type jobState struct {
	pending    []int32 // tasks waiting to be placed
	started    []bool
	nStarted   int
	left       int
	blocked    time.Duration // -1: not blocked
	step       escalation.Step
	allowed    []bool // per class; nil: any node
	cached     bool
	outOfClass bool
}

type sim struct {
	cfg       Config
	cl        Cluster
	jobs      []Job
	js        []jobState
	rng       *rand.Rand
	tracker   *greylist.Tracker
	base      time.Time
	now       time.Duration
	free      []int
	byClass   [][]int
	names     []string
	index     map[string]int
	grey      []bool
	classFree []int
	anyFree   int
	events    *eventq.Queue[event]
	pending   []int // jobs with tasks waiting, in arrival order
	waits     []float64
	dones     []float64
	res       Result
}

// Run simulates jobs (sorted by arrival) on the cluster under cfg until
// every job has finished or nothing more can happen.
func Run(cl Cluster, jobs []Job, cfg Config) (Result, error) {
	if cfg.Chosen == 0 {
		cfg.Chosen = 1
	}
	if cfg.Extra == 0 {
		cfg.Extra = 1
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = 3
	}
	if cfg.Reset == 0 {
		cfg.Reset = 6 * time.Hour
	}
	if cl.Classes < 1 || cl.Slots < 1 || len(cl.Nodes) == 0 || cfg.Chosen < 1 || cfg.Chosen > cl.Classes || cfg.Extra < 0 ||
		cfg.Escalate && cfg.Delay <= 0 {
		return Result{}, fmt.Errorf("escalsim: want classes, slots and nodes, 1 to %d chosen classes and a delay > 0 to escalate", cl.Classes)
	}
	s := &sim{cfg: cfg, cl: cl, jobs: jobs, js: make([]jobState, len(jobs)), rng: rand.New(rand.NewPCG(cfg.Seed, 0xfa17)), events: eventq.New(eventOrder),
		base: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), free: make([]int, len(cl.Nodes)), byClass: make([][]int, cl.Classes),
		names: make([]string, len(cl.Nodes)), index: map[string]int{}, grey: make([]bool, len(cl.Nodes)), classFree: make([]int, cl.Classes)}
	s.tracker = greylist.NewTracker(cfg.Threshold, cfg.Reset, s.base)
	for i, n := range cl.Nodes {
		if n.Class < 0 || n.Class >= cl.Classes {
			return Result{}, fmt.Errorf("escalsim: node %d in class %d of %d", i, n.Class, cl.Classes)
		}
		s.free[i] = cl.Slots
		s.byClass[n.Class] = append(s.byClass[n.Class], i)
		s.names[i] = "n" + strconv.Itoa(i)
		s.index[s.names[i]] = i
	}
	for j, job := range jobs {
		if len(job.Ranked) < cfg.Chosen || j > 0 && job.Arrival < jobs[j-1].Arrival {
			return Result{}, fmt.Errorf("escalsim: job %d: want arrivals in order and at least %d ranked classes", j, cfg.Chosen)
		}
	}
	s.res = Result{Name: cfg.Name, Jobs: len(jobs)}
	s.loop()
	s.res.Finished = len(s.dones)
	s.res.MeanWait, s.res.P90Wait = meanP90(s.waits)
	s.res.MeanCompletion, s.res.P90Completion = meanP90(s.dones)
	s.res.Makespan = s.now.Seconds()
	return s.res, nil
}

func seconds(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Second))) }

func (s *sim) loop() {
	next := 0
	for next < len(s.jobs) || s.events.Len() > 0 {
		arrival := time.Duration(math.MaxInt64)
		if next < len(s.jobs) {
			arrival = seconds(s.jobs[next].Arrival)
		}
		if s.events.Len() > 0 && s.events.Peek().t <= arrival {
			s.now = s.events.Peek().t
		} else {
			s.now = arrival
		}
		for s.events.Len() > 0 && s.events.Peek().t == s.now {
			s.handle(s.events.Pop())
		}
		for next < len(s.jobs) && seconds(s.jobs[next].Arrival) == s.now {
			s.arrive(next)
			next++
		}
		s.schedule()
	}
}

func (s *sim) arrive(j int) {
	st := &s.js[j]
	n := len(s.jobs[j].Tasks)
	*st = jobState{pending: make([]int32, n), started: make([]bool, n), left: n, blocked: -1}
	for k := range st.pending {
		st.pending[k] = int32(k)
	}
	if n == 0 {
		s.dones, s.waits = append(s.dones, 0), append(s.waits, 0)
		return
	}
	s.pending = append(s.pending, j)
}

func (s *sim) handle(e event) {
	if e.kind == wake {
		return
	}
	s.free[e.node]++
	st := &s.js[e.job]
	switch e.kind {
	case done:
		if st.left--; st.left == 0 {
			s.dones = append(s.dones, (s.now - seconds(s.jobs[e.job].Arrival)).Seconds())
		}
		return
	case fault:
		s.res.LostToFaults++
		s.tracker.Record(s.names[e.node], greylist.NodeFault, s.base.Add(s.now))
	case evict:
		s.res.Evictions++
		s.tracker.Record(s.names[e.node], greylist.Evicted, s.base.Add(s.now))
	}
	if len(st.pending) == 0 {
		if k, found := slices.BinarySearch(s.pending, int(e.job)); !found {
			s.pending = slices.Insert(s.pending, k, int(e.job))
		}
	}
	st.pending = append(st.pending, e.task)
}

// schedule places what it can of every waiting job, oldest first; a job
// that still waits is blocked from now on (escalation counts from then).
func (s *sim) schedule() {
	clear(s.grey)
	if s.cfg.Greylist {
		gl := s.tracker.Greylisted(s.base.Add(s.now))
		s.res.GreylistedMax = max(s.res.GreylistedMax, len(gl))
		for _, n := range gl {
			s.grey[s.index[n]] = true
		}
	}
	clear(s.classFree)
	s.anyFree = 0
	for i, f := range s.free {
		if !s.grey[i] {
			s.classFree[s.cl.Nodes[i].Class] += f
			s.anyFree += f
		}
	}
	kept := s.pending[:0]
	for _, j := range s.pending {
		st := &s.js[j]
		if s.anyFree > 0 {
			s.place(j)
		}
		if len(st.pending) == 0 {
			st.blocked = -1
			continue
		}
		kept = append(kept, j)
		if st.blocked < 0 {
			st.blocked = s.now
			if s.cfg.Escalate {
				for k := time.Duration(1); k <= time.Duration(escalation.AnyNode); k++ {
					s.events.Push(event{t: s.now + k*s.cfg.Delay, kind: wake, job: int32(j)})
				}
			}
		}
	}
	s.pending = kept
}

// allowed is the classes job j may use now: nil for any node.
func (s *sim) allowed(j int) []bool {
	st := &s.js[j]
	step := escalation.Chosen
	if s.cfg.Escalate && st.blocked >= 0 {
		step = escalation.Escalate(s.base.Add(st.blocked), s.base.Add(s.now), s.cfg.Delay)
	}
	if st.cached && st.step == step {
		return st.allowed
	}
	ranked := make([]string, len(s.jobs[j].Ranked))
	for k, c := range s.jobs[j].Ranked {
		ranked[k] = strconv.Itoa(c)
	}
	classes := escalation.Widen(step, ranked[:s.cfg.Chosen], ranked, s.cfg.Extra)
	st.step, st.cached, st.allowed = step, true, nil
	if classes != nil {
		st.allowed = make([]bool, s.cl.Classes)
		for _, c := range classes {
			k, _ := strconv.Atoi(c)
			st.allowed[k] = true
		}
	}
	return st.allowed
}

// place starts job j's waiting tasks, each on the allowed, not greylisted
// node with the most free slots (a random one of those on a tie).
func (s *sim) place(j int) {
	st := &s.js[j]
	allowed := s.allowed(j)
	for len(st.pending) > 0 {
		best, ties := -1, 0
		for c := range s.byClass {
			if allowed != nil && !allowed[c] || s.classFree[c] == 0 {
				continue
			}
			for _, i := range s.byClass[c] {
				switch {
				case s.grey[i] || s.free[i] == 0:
				case best < 0 || s.free[i] > s.free[best]:
					best, ties = i, 1
				case s.free[i] == s.free[best]:
					if ties++; s.rng.IntN(ties) == 0 {
						best = i
					}
				}
			}
		}
		if best < 0 {
			return
		}
		task := st.pending[0]
		st.pending = st.pending[1:]
		s.start(j, int(task), best)
	}
}

func (s *sim) start(j, task, i int) {
	st := &s.js[j]
	n := s.cl.Nodes[i]
	s.free[i]--
	s.classFree[n.Class]--
	s.anyFree--
	s.res.Placements++
	if n.FaultP > 0 {
		s.res.FlakyPlacements++
	}
	if !slices.Contains(s.jobs[j].Ranked[:s.cfg.Chosen], n.Class) {
		s.res.OutOfClass++
		if !st.outOfClass {
			st.outOfClass = true
			s.res.EscalatedJobs++
		}
	}
	if !st.started[task] {
		st.started[task] = true
		if st.nStarted++; st.nStarted == len(st.started) {
			s.waits = append(s.waits, (s.now - seconds(s.jobs[j].Arrival)).Seconds())
		}
	}
	d := seconds(s.jobs[j].Tasks[task])
	e := event{t: s.now + d, kind: done, node: int32(i), job: int32(j), task: int32(task)}
	if u := s.rng.Float64(); u < n.FaultP {
		e.kind, e.t = fault, s.now+time.Duration(s.rng.Float64()*float64(d))
	} else if u < n.FaultP+n.EvictP {
		e.kind, e.t = evict, s.now+time.Duration(s.rng.Float64()*float64(d))
	}
	s.events.Push(e)
}

// meanP90 is the mean and nearest-rank 90th percentile.
func meanP90(x []float64) (float64, float64) {
	if len(x) == 0 {
		return 0, 0
	}
	x = slices.Clone(x)
	slices.Sort(x)
	var sum float64
	for _, v := range x {
		sum += v
	}
	return sum / float64(len(x)), x[max(0, int(math.Ceil(0.9*float64(len(x))))-1)]
}
