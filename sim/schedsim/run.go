package schedsim

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/sim/eventq"
)

// Result is what one run measured.
type Result struct {
	Policy            Policy         `json:"policy"`
	Scaling           Scaling        `json:"scaling"`
	Factor            float64        `json:"factor"`
	Servers           int            `json:"servers"`
	PrimaryUtil       float64        `json:"primary_utilisation"` // mean share of cores the primaries used
	Utilisation       float64        `json:"utilisation"`         // primary + harvested
	Jobs              int            `json:"jobs"`                // arrived and finished in the span
	Unfinished        int            `json:"unfinished"`
	MeanJobSeconds    float64        `json:"mean_job_seconds"`
	P99JobSeconds     float64        `json:"p99_job_seconds"`
	Evicted           int            `json:"tasks_evicted"`
	WastedTaskSeconds float64        `json:"wasted_task_seconds"`
	OverrunSlots      int            `json:"reserve_overrun_server_slots"` // stock: harvested tasks in the primary's reserve
	OverrunShare      float64        `json:"reserve_overrun_share"`
	Fits              map[string]int `json:"algorithm1_fits,omitempty"` // H: jobs by Algorithm 1's first outcome ("none": held)
	// ByJobClass breaks jobs down by the workload's job class (short,
	// medium, long); EvictedByPattern counts evictions by the utilisation
	// pattern of the server's tenant, as the placer classifies it.
	ByJobClass       map[string]*ClassResult `json:"by_job_class,omitempty"`
	EvictedByPattern map[string]int          `json:"evicted_by_pattern,omitempty"`
	WallSeconds      float64                 `json:"wall_seconds"`
}

// Run simulates the span under one policy.
func Run(cfg Config) (Result, error) {
	began := time.Now()
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	s := &sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), events: eventq.New(finishedFirst), byTenant: make([][]int, len(cfg.Tenants)),
		start: cfg.Tenants[0].Series.Start.Add(time.Duration(cfg.HistoryDays) * 24 * time.Hour)}
	s.res = Result{Policy: cfg.Policy, Scaling: cfg.Scaling, Factor: cfg.Factor, Fits: map[string]int{},
		ByJobClass: map[string]*ClassResult{}, EvictedByPattern: map[string]int{}}
	for ti, t := range cfg.Tenants {
		for k := 0; k < t.Servers; k++ {
			s.byTenant[ti] = append(s.byTenant[ti], len(s.servers))
			s.servers = append(s.servers, server{tenant: ti, class: -1})
		}
	}
	s.res.Servers = len(s.servers)
	s.classifyTenants() // H places by it; every policy reports by it
	span := cfg.Span.Seconds()
	rate := cfg.JobsPerHour / 3600
	if rate == 0 {
		rate = cfg.OfferedLoad * float64(len(s.servers)*cfg.Cores) / cfg.Mix.meanCoreSeconds(cfg.Seed, cfg.TaskCores)
	}
	// the same arrivals and jobs under every policy: their own random stream
	arrivals := rand.New(rand.NewPCG(cfg.Seed, 0xa77))
	nextArrival := arrivals.ExpFloat64() / rate
	if cfg.Arrivals != nil {
		nextArrival = math.Inf(1)
		if len(cfg.Arrivals) > 0 {
			nextArrival = cfg.Arrivals[0]
		}
	}
	slotSeconds := history.Slot.Seconds()
	nextSlot := 0
	for {
		nextSlotAt := float64(nextSlot) * slotSeconds
		at, kind := nextSlotAt, 0
		if nextArrival < at {
			at, kind = nextArrival, 1
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
			s.retryUnplaced()
			s.place()
			if cfg.Progress != nil && nextSlot%720 == 0 {
				cfg.Progress(at / span)
			}
		case 1:
			j := &job{arrival: at, spec: cfg.Mix.draw(arrivals), typ: -1, cores: cfg.TaskCores}
			nextArrival = at + arrivals.ExpFloat64()/rate
			if cfg.Arrivals != nil {
				nextArrival = math.Inf(1)
				if s.arrived+1 < len(cfg.Arrivals) {
					nextArrival = cfg.Arrivals[s.arrived+1]
				}
			}
			s.arrived++
			s.admitJob(j)
			s.place()
		case 2:
			f := s.events.Pop()
			if f.gen == f.t.gen {
				s.taskDone(f)
			}
		}
	}
	s.finishResult()
	s.res.WallSeconds = time.Since(began).Seconds()
	return s.res, nil
}

// ClassResult is one job class's share of a run.
type ClassResult struct {
	Jobs              int     `json:"jobs"`
	MeanJobSeconds    float64 `json:"mean_job_seconds"`
	Evicted           int     `json:"tasks_evicted"`
	WastedTaskSeconds float64 `json:"wasted_task_seconds"`
}

func (s *sim) classResult(name string) *ClassResult {
	c := s.res.ByJobClass[name]
	if c == nil {
		c = &ClassResult{}
		s.res.ByJobClass[name] = c
	}
	return c
}

// jobDone records a finished job; nothing of it is kept but its time, so
// that a month of a large datacenter fits in memory.
func (s *sim) jobDone(j *job) {
	took := s.now - j.arrival
	s.times = append(s.times, took)
	c := s.classResult(j.spec.class)
	c.Jobs++
	c.MeanJobSeconds += took // summed here, divided in finishResult
}

func (s *sim) finishResult() {
	times := s.times
	s.res.Unfinished = s.arrived - len(times)
	sort.Float64s(times)
	s.res.Jobs = len(times)
	if len(times) > 0 {
		var sum float64
		for _, t := range times {
			sum += t
		}
		s.res.MeanJobSeconds = sum / float64(len(times))
		for _, c := range s.res.ByJobClass {
			c.MeanJobSeconds /= float64(max(1, c.Jobs))
		}
		s.res.P99JobSeconds = times[min(len(times)-1, int(math.Ceil(0.99*float64(len(times))))-1)]
	}
	if s.slots > 0 {
		s.res.Utilisation = s.util / float64(s.slots)
		s.res.PrimaryUtil = s.primUtil / float64(s.slots)
		s.res.OverrunShare = float64(s.res.OverrunSlots) / float64(s.slots*len(s.servers))
	}
}
