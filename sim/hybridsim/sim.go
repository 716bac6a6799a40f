package hybridsim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/harvest-platform/harvest/placer/partition"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// Policy is whether short jobs have a partition of their own.
type Policy string

const (
	NoPartition Policy = "none"      // long and short jobs on any node: the baseline
	Partition   Policy = "partition" // long jobs kept off placer/partition's short-job partition
)

// Config is one run's settings.
type Config struct {
	Nodes  int
	Policy Policy
	// Hybrid sets the cutoff and the partition's rule; zero: partition.Default(Nodes).
	Hybrid partition.Config
	// Probes per short task (Sparrow's 2 when 0): a job of n tasks probes
	// Probes*n random nodes and its tasks go to the n least loaded.
	Probes int
	// StealProbes is how many random nodes a node that falls idle asks for
	// short tasks queued behind a long one (Section 4.6); 0: no stealing.
	StealProbes int
	Seed        uint64
	Progress    func(done float64) // share of jobs finished, now and then; may be nil
}

// Latency summarises job times (completion - arrival) in seconds.
type Latency struct {
	Jobs   int     `json:"jobs"`
	Median float64 `json:"median_seconds"`
	P90    float64 `json:"p90_seconds"`
	Mean   float64 `json:"mean_seconds"`
}

// Result is one run's outcome. Short and long are as the scheduler classed
// each job when it arrived.
type Result struct {
	Policy       Policy  `json:"policy"`
	Nodes        int     `json:"nodes"`
	Jobs         int     `json:"jobs"`
	Short        Latency `json:"short"`
	Long         Latency `json:"long"`
	PartitionMin int     `json:"partition_min"` // 0 without a partition
	PartitionMax int     `json:"partition_max"`
	CutoffMin    float64 `json:"cutoff_min_seconds"`
	CutoffMax    float64 `json:"cutoff_max_seconds"`
	CutoffMoves  int     `json:"cutoff_moves"`
	Stolen       int     `json:"tasks_stolen"`
	Makespan     float64 `json:"makespan_seconds"`
	Utilisation  float64 `json:"utilisation"` // busy node-seconds over nodes x makespan
}

type task struct {
	job  int32
	long bool
	dur  float64
}

// event is a task finishing on a node.
type event struct {
	t    float64
	node int32
}

// byTimeThenNode orders events; a node runs one task at a time, so no two
// events tie.
func byTimeThenNode(a, b event) bool { return a.t < b.t || a.t == b.t && a.node < b.node }

type node struct {
	running  bool
	cur      task
	end      float64
	queue    []task // waiting, FIFO from head
	head     int
	work     float64 // waiting task-seconds
	longWork float64 // waiting long task-seconds
	longs    int     // long tasks waiting or running
	shorts   int     // short tasks waiting
}

func (n *node) waiting() []task { return n.queue[n.head:] }

// drain is when the node's queue would be empty: the load it advertises
// to a probe.
func (n *node) drain(now float64) float64 {
	if n.running {
		return n.end + n.work
	}
	return now + n.work
}

// longLoad is the long work left on the node: all the central scheduler
// knows.
func (n *node) longLoad(now float64) float64 {
	w := n.longWork
	if n.running && n.cur.long {
		w += n.end - now
	}
	return w
}

type jobState struct {
	stage, left int
	short       bool
	mean        float64
}

type sim struct {
	cfg     Config
	jobs    []Job
	js      []jobState
	state   *partition.State
	rng     *rand.Rand
	nodes   []node
	events  *eventq.Queue[event]
	now     float64
	busy    float64
	cursor  int
	mark    []uint32
	gen     uint32
	probe   []int
	res     Result
	lat     [2][]float64 // short, long
	started bool
}

// Run simulates jobs (sorted by arrival) on cfg.Nodes nodes until every
// job has finished.
func Run(cfg Config, jobs []Job) (Result, error) {
	if cfg.Nodes < 2 {
		return Result{}, fmt.Errorf("hybridsim: want at least 2 nodes, have %d", cfg.Nodes)
	}
	if cfg.Policy != NoPartition && cfg.Policy != Partition {
		return Result{}, fmt.Errorf("hybridsim: policy %q: want %s or %s", cfg.Policy, NoPartition, Partition)
	}
	if cfg.Hybrid.Window == 0 {
		cfg.Hybrid = partition.Default(cfg.Nodes)
	}
	if cfg.Probes == 0 {
		cfg.Probes = 2
	}
	if cfg.Probes < 1 || cfg.StealProbes < 0 {
		return Result{}, fmt.Errorf("hybridsim: probes %d and steal probes %d: want at least 1 and not negative", cfg.Probes, cfg.StealProbes)
	}
	for i := 1; i < len(jobs); i++ {
		if jobs[i].Arrival < jobs[i-1].Arrival {
			return Result{}, fmt.Errorf("hybridsim: job %d arrives before job %d", i, i-1)
		}
	}
	s := &sim{cfg: cfg, jobs: jobs, js: make([]jobState, len(jobs)), state: partition.New(cfg.Hybrid),
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x4a3c)), events: eventq.New(byTimeThenNode), nodes: make([]node, cfg.Nodes), mark: make([]uint32, cfg.Nodes)}
	s.res = Result{Policy: cfg.Policy, Nodes: cfg.Nodes, Jobs: len(jobs)}
	s.observeState()
	s.loop()
	s.res.Short, s.res.Long = summarise(s.lat[0]), summarise(s.lat[1])
	s.res.Makespan = s.now
	if s.now > 0 {
		s.res.Utilisation = s.busy / (float64(cfg.Nodes) * s.now)
	}
	if cfg.Policy == NoPartition {
		s.res.PartitionMin, s.res.PartitionMax = 0, 0
	}
	return s.res, nil
}

func (s *sim) loop() {
	next, done, step := 0, 0, max(1, len(s.jobs)/200)
	for next < len(s.jobs) || s.events.Len() > 0 {
		if s.events.Len() > 0 && (next == len(s.jobs) || s.events.Peek().t <= s.jobs[next].Arrival) {
			e := s.events.Pop()
			s.now = e.t
			if s.finish(int(e.node)) {
				done++
				if s.cfg.Progress != nil && done%step == 0 {
					s.cfg.Progress(float64(done) / float64(len(s.jobs)))
				}
			}
			continue
		}
		j := next
		next++
		s.now = s.jobs[j].Arrival
		mean := s.jobs[j].MeanTask()
		s.js[j] = jobState{short: s.state.Short(seconds(mean)), mean: mean}
		s.startStage(j)
		if s.js[j].stage == len(s.jobs[j].Stages) { // no tasks at all
			done++
			s.jobDone(j)
		}
	}
}

// partition is the number of nodes (0..p-1) only short jobs may use.
func (s *sim) partition() int {
	if s.cfg.Policy != Partition {
		return 0
	}
	return min(s.state.Size, s.cfg.Nodes-1)
}

// startStage places the job's current stage, skipping empty ones.
func (s *sim) startStage(j int) {
	st := &s.js[j]
	for st.stage < len(s.jobs[j].Stages) && len(s.jobs[j].Stages[st.stage]) == 0 {
		st.stage++
	}
	if st.stage == len(s.jobs[j].Stages) {
		return
	}
	durs := s.jobs[j].Stages[st.stage]
	st.left = len(durs)
	if st.short {
		s.placeShort(j, durs)
	} else {
		s.placeLong(j, durs)
	}
}

// placeLong puts each task on the general partition's node with the least
// long work, ties broken round-robin.
func (s *sim) placeLong(j int, durs []float64) {
	lo := s.partition()
	span := s.cfg.Nodes - lo
	for _, d := range durs {
		best, bestLoad := -1, 0.0
		for k := 0; k < span; k++ {
			i := lo + (s.cursor+k)%span
			if l := s.nodes[i].longLoad(s.now); best < 0 || l < bestLoad {
				best, bestLoad = i, l
			}
		}
		s.cursor = (s.cursor + 1) % span
		s.enqueue(best, task{job: int32(j), long: true, dur: d})
	}
}

// placeShort probes Probes random nodes per task across the whole cluster
// and puts the tasks on the least loaded of them, one each (Sparrow's batch
// sampling: with late binding the first n of the probed queues to drain
// run the n tasks). Probes covering the cluster may stack tasks on a node.
func (s *sim) placeShort(j int, durs []float64) {
	k := s.cfg.Probes * len(durs)
	if k >= s.cfg.Nodes {
		for _, d := range durs {
			best := 0
			for i := 1; i < s.cfg.Nodes; i++ {
				if s.nodes[i].drain(s.now) < s.nodes[best].drain(s.now) {
					best = i
				}
			}
			s.enqueue(best, task{job: int32(j), dur: d})
		}
		return
	}
	s.probe = s.sample(0, s.cfg.Nodes, k, -1, s.probe[:0])
	type probed struct {
		node  int
		drain float64
	}
	ps := make([]probed, len(s.probe))
	for x, i := range s.probe {
		ps[x] = probed{i, s.nodes[i].drain(s.now)}
	}
	slices.SortStableFunc(ps, func(a, b probed) int { return cmp.Compare(a.drain, b.drain) })
	for t, d := range durs {
		s.enqueue(ps[t].node, task{job: int32(j), dur: d})
	}
}

// sample appends k distinct random nodes of lo..hi-1 other than skip (all
// of them, shuffled, when there are no more than k).
func (s *sim) sample(lo, hi, k, skip int, out []int) []int {
	n := hi - lo
	if skip >= lo && skip < hi {
		n--
	}
	if k >= n {
		for i := lo; i < hi; i++ {
			if i != skip {
				out = append(out, i)
			}
		}
		s.rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
		return out
	}
	s.gen++
	if s.gen == 0 {
		clear(s.mark)
		s.gen = 1
	}
	for len(out) < k {
		i := lo + s.rng.IntN(hi-lo)
		if i == skip || s.mark[i] == s.gen {
			continue
		}
		s.mark[i] = s.gen
		out = append(out, i)
	}
	return out
}

func (s *sim) enqueue(i int, t task) {
	n := &s.nodes[i]
	if t.long {
		n.longs++
	}
	if !n.running {
		s.start(i, t)
		return
	}
	n.queue = append(n.queue, t)
	n.work += t.dur
	if t.long {
		n.longWork += t.dur
	} else {
		n.shorts++
	}
}

func (s *sim) start(i int, t task) {
	n := &s.nodes[i]
	n.running, n.cur, n.end = true, t, s.now+t.dur
	s.events.Push(event{t: n.end, node: int32(i)})
}

// finish ends node i's running task and starts its next; it reports
// whether a job finished.
func (s *sim) finish(i int) bool {
	n := &s.nodes[i]
	t := n.cur
	n.running = false
	s.busy += t.dur
	if t.long {
		n.longs--
	}
	s.next(i)
	jobDone := false
	st := &s.js[t.job]
	if st.left--; st.left == 0 {
		st.stage++
		s.startStage(int(t.job))
		if st.stage == len(s.jobs[t.job].Stages) {
			s.jobDone(int(t.job))
			jobDone = true
		}
	}
	if !n.running && s.cfg.StealProbes > 0 {
		s.steal(i)
	}
	return jobDone
}

// next starts the head of node i's queue, if any.
func (s *sim) next(i int) {
	n := &s.nodes[i]
	if n.head == len(n.queue) {
		n.queue, n.head = n.queue[:0], 0
		return
	}
	t := n.queue[n.head]
	n.head++
	n.work -= t.dur
	if t.long {
		n.longWork -= t.dur
	} else {
		n.shorts--
	}
	if n.head > 64 && n.head > len(n.queue)/2 {
		n.queue, n.head = append(n.queue[:0], n.queue[n.head:]...), 0
	}
	s.start(i, t)
}

// steal lets idle node i take, from the first of StealProbes random nodes
// of the general partition that has one, the first run of short tasks
// queued behind a long task (running or waiting) and run them in order.
func (s *sim) steal(i int) {
	victims := s.sample(s.partition(), s.cfg.Nodes, s.cfg.StealProbes, i, s.probe[:0])
	s.probe = victims
	for _, v := range victims {
		vn := &s.nodes[v]
		if vn.longs == 0 || vn.shorts == 0 {
			continue
		}
		w := vn.waiting()
		behindLong, from, to := vn.running && vn.cur.long, -1, -1
		for k, t := range w {
			if t.long {
				if from >= 0 {
					break
				}
				behindLong = true
				continue
			}
			if behindLong {
				if from < 0 {
					from = k
				}
				to = k + 1
			}
		}
		if from < 0 {
			continue
		}
		stolen := slices.Clone(w[from:to])
		vn.queue = slices.Delete(vn.queue, vn.head+from, vn.head+to)
		for _, t := range stolen {
			vn.work -= t.dur
			vn.shorts--
			s.enqueue(i, t)
		}
		s.res.Stolen += len(stolen)
		return
	}
}

func (s *sim) jobDone(j int) {
	st := s.js[j]
	k := 1
	if st.short {
		k = 0
	}
	s.lat[k] = append(s.lat[k], s.now-s.jobs[j].Arrival)
	if s.state.Observe(seconds(st.mean)) {
		s.res.CutoffMoves++
		s.observeState()
	}
}

func (s *sim) observeState() {
	c := s.state.Cutoff.Seconds()
	if !s.started {
		s.started = true
		s.res.PartitionMin, s.res.PartitionMax, s.res.CutoffMin, s.res.CutoffMax = s.state.Size, s.state.Size, c, c
		return
	}
	s.res.PartitionMin, s.res.PartitionMax = min(s.res.PartitionMin, s.state.Size), max(s.res.PartitionMax, s.state.Size)
	s.res.CutoffMin, s.res.CutoffMax = min(s.res.CutoffMin, c), max(s.res.CutoffMax, c)
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
