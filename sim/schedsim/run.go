package schedsim

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// Result is what one run measured.
type Result struct {
	Source      string  `json:"source"`
	Policy      Policy  `json:"policy"`
	Scaling     Scaling `json:"scaling"`
	Factor      float64 `json:"factor"`
	Seed        uint64  `json:"seed"`
	Servers     int     `json:"servers"`
	JobScale    float64 `json:"job_scale"`           // lengths and widths x this
	OfferedLoad float64 `json:"offered_load"`        // share of all cores the arrivals' work fills
	PrimaryUtil float64 `json:"primary_utilisation"` // mean share of cores the primaries used
	Utilisation float64 `json:"utilisation"`         // primary + harvested tasks running
	Arrived     int     `json:"jobs_arrived"`
	Jobs        int     `json:"jobs"` // arrived and finished in the span
	Unfinished  int     `json:"unfinished"`
	// MeanJobSeconds is over the jobs that finished; CensoredMeanJobSeconds
	// counts the unfinished ones at their age when the span ended (a lower
	// bound on their time), so a policy that leaves jobs waiting is not
	// flattered. Saturated marks a point where more than 5% of the arrivals
	// were still in the system at the end: the queue grew without bound.
	MeanJobSeconds         float64        `json:"mean_job_seconds"`
	CensoredMeanJobSeconds float64        `json:"censored_mean_job_seconds"`
	P99JobSeconds          float64        `json:"p99_job_seconds"`
	Saturated              bool           `json:"saturated"`
	Evicted                int            `json:"containers_evicted"`
	WastedTaskSeconds      float64        `json:"wasted_task_seconds"`
	OverrunSlots           int            `json:"reserve_overrun_server_slots"` // stock: harvested containers in the primary's reserve
	OverrunShare           float64        `json:"reserve_overrun_share"`
	Fits                   map[string]int `json:"algorithm1_fits,omitempty"` // H: jobs by Algorithm 1's outcome
	// ByJobClass breaks jobs down by the workload's job class (short,
	// medium, long); EvictedByPattern counts evictions by the utilisation
	// pattern of the server's tenant, as the placer classifies it.
	ByJobClass       map[string]*ClassResult `json:"by_job_class,omitempty"`
	EvictedByPattern map[string]int          `json:"evicted_by_pattern,omitempty"`
	ServersByPattern map[string]int          `json:"servers_by_pattern,omitempty"`
	// Survival is, per class, the survival the history predicted for a task
	// of each length and the share of the span's tasks of about that length
	// that ran to the end.
	Survival    []ClassSurvival `json:"survival,omitempty"`
	WallSeconds float64         `json:"wall_seconds"`
}

// ClassResult is one job class's share of a run.
type ClassResult struct {
	Jobs              int     `json:"jobs"`
	MeanJobSeconds    float64 `json:"mean_job_seconds"`
	Evicted           int     `json:"containers_evicted"`
	WastedTaskSeconds float64 `json:"wasted_task_seconds"`
	// TaskSecondsByPattern is where the class's finished tasks ran, by the
	// pattern of the server's tenant.
	TaskSecondsByPattern map[string]float64 `json:"task_seconds_by_pattern"`
	// Fits (H) counts the class's jobs by the type the placer gave them and
	// Algorithm 1's outcome, as "type/fit": whether the jobs H means to
	// steer were steered at all.
	Fits map[string]int `json:"algorithm1_fits,omitempty"`
}

func (s *sim) classResult(name string) *ClassResult {
	c := s.res.ByJobClass[name]
	if c == nil {
		c = &ClassResult{TaskSecondsByPattern: map[string]float64{}, Fits: map[string]int{}}
		s.res.ByJobClass[name] = c
	}
	return c
}

// Run simulates the span under one policy.
func Run(cfg Config) (Result, error) {
	began := time.Now()
	s, rate, err := newSim(cfg)
	if err != nil {
		return Result{}, err
	}
	s.loop(rate)
	s.finishResult()
	s.res.WallSeconds = time.Since(began).Seconds()
	return s.res, nil
}

// newSim lays the servers out, classifies the tenants and sets the job
// scale; it returns the state before the span and the arrival rate.
func newSim(cfg Config) (*sim, float64, error) {
	if err := cfg.defaults(); err != nil {
		return nil, 0, err
	}
	s := &sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), events: eventq.New(finishedFirst),
		byTenant: make([][]int, len(cfg.Tenants)), tenantCPU: make([]float64, len(cfg.Tenants)),
		start: cfg.Tenants[0].Series.Start.Add(time.Duration(cfg.HistoryDays) * 24 * time.Hour)}
	for i := range s.tenantCPU {
		s.tenantCPU[i] = -1 // the first slot sets every server
	}
	s.joined = make([]int, len(cfg.Tenants))
	for i, t := range cfg.Tenants {
		s.joined[i] = firstSample(t.Series.Values)
	}
	s.res = Result{Source: cfg.Source, Policy: cfg.Policy, Scaling: cfg.Scaling, Factor: cfg.Factor, Seed: cfg.Seed, Fits: map[string]int{},
		ByJobClass: map[string]*ClassResult{}, EvictedByPattern: map[string]int{}}
	s.classes = classifyTenants(cfg) // H places by it; every policy reports by it
	s.layOut()
	s.room, s.open = newFenwick(len(s.servers)), newFenwick(len(s.servers))
	if cfg.Unlabelled == Heartbeat {
		s.heartbeat = newHeartbeatOrder(len(s.servers), cfg.Seed)
	}
	s.waiting = newWaitQueues(len(s.classes.table.Classes))
	s.res.Servers = len(s.servers)
	s.res.ServersByPattern = map[string]int{}
	for i := range s.servers {
		s.res.ServersByPattern[s.patternOf(i)]++
	}
	rate := s.arrivalRate()
	s.classes.thresholds = cfg.Thresholds
	if s.classes.thresholds.Short == 0 && s.classes.thresholds.Long == 0 {
		s.classes.thresholds = s.splitThresholds()
	}
	s.survival = newSurvivalCounts(s)
	return s, rate, nil
}

// arrivalRate sets the job scale and returns arrivals per second: with a
// rate and a load, the scale that makes the rate carry the load (the mix's
// work grows with the scale squared: lengths and widths); with a load
// alone, the rate that carries it at the given scale.
func (s *sim) arrivalRate() float64 {
	cfg := s.cfg
	w := cfg.Mix.meanCoreSeconds(cfg.Seed)
	cores := float64(len(s.servers) * cfg.Cores)
	rate := cfg.JobsPerHour / 3600
	s.scale = cfg.JobScale
	switch {
	case s.scale == 0 && rate > 0 && cfg.OfferedLoad > 0:
		s.scale = math.Sqrt(cfg.OfferedLoad * cores / (rate * w))
	case s.scale == 0:
		s.scale = 1
	}
	if rate == 0 {
		rate = cfg.OfferedLoad * cores / (w * s.scale * s.scale)
	}
	s.res.JobScale = s.scale
	s.res.OfferedLoad = rate * w * s.scale * s.scale / cores
	return rate
}

// loop runs the events of the span: slots, arrivals, task ends.
func (s *sim) loop(rate float64) {
	cfg := s.cfg
	span := cfg.Span.Seconds()
	// the same arrivals and jobs under every policy: their own random stream
	arrivals := rand.New(rand.NewPCG(cfg.Seed, 0xa77))
	nextArrival := func() float64 {
		if cfg.Arrivals != nil {
			if s.arrived < len(cfg.Arrivals) {
				return cfg.Arrivals[s.arrived]
			}
			return math.Inf(1)
		}
		return s.now + arrivals.ExpFloat64()/rate
	}
	arrival := nextArrival()
	slotSeconds := history.Slot.Seconds()
	nextSlot := 0
	for {
		at, kind := float64(nextSlot)*slotSeconds, 0
		if arrival < at {
			at, kind = arrival, 1
		}
		if s.events.Len() > 0 && s.events.Peek().at < at {
			at, kind = s.events.Peek().at, 2
		}
		if at >= span {
			break
		}
		s.now = at
		switch kind {
		case 0:
			s.slot(nextSlot)
			nextSlot++
			if cfg.HoldUnfit {
				s.retryUnfit()
			}
			if cfg.Progress != nil && nextSlot%history.SlotsPerDay == 0 {
				cfg.Progress(at / span)
			}
		case 1:
			spec := cfg.Mix.draw(arrivals).scaled(s.scale, arrivals)
			s.arrived++
			j := newJob(int64(s.arrived), at, spec)
			s.jobs = append(s.jobs, j)
			arrival = nextArrival()
			s.admit(j)
		case 2:
			f := s.events.Pop()
			switch {
			case f.release != nil:
				s.releaseStage(f.release)
			case f.gen != f.c.gen: // stale: the container changed since
			case f.idle:
				s.idleExpired(f.c)
			default:
				s.taskDone(f.c)
			}
		}
	}
	s.now = span
}

func (s *sim) finishResult() {
	times := s.times
	s.res.Arrived = s.arrived
	s.res.Unfinished = s.arrived - len(times)
	sort.Float64s(times)
	s.res.Jobs = len(times)
	var sum float64
	for _, t := range times {
		sum += t
	}
	if len(times) > 0 {
		s.res.MeanJobSeconds = sum / float64(len(times))
		s.res.P99JobSeconds = times[min(len(times)-1, int(math.Ceil(0.99*float64(len(times))))-1)]
	}
	for _, j := range s.jobs {
		if j.spec.stages != nil { // not done: counted at its age
			sum += s.now - j.arrival
		}
	}
	if s.arrived > 0 {
		s.res.CensoredMeanJobSeconds = sum / float64(s.arrived)
	}
	s.res.Saturated = float64(s.res.Unfinished) > 0.05*float64(s.arrived)
	for _, c := range s.res.ByJobClass {
		c.MeanJobSeconds /= float64(max(1, c.Jobs))
	}
	if s.slots > 0 {
		s.res.Utilisation = s.util / float64(s.slots)
		s.res.PrimaryUtil = s.primUtil / float64(s.slots)
		s.res.OverrunShare = float64(s.res.OverrunSlots) / float64(s.slots*len(s.servers))
	}
	s.res.Survival = s.survival.results(s)
}

func itoa(i int) string { return strconv.Itoa(i) }
