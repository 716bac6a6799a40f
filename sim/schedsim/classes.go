package schedsim

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// classView is H's knowledge: the class table the placer's classifier
// builds from the history window, and where each class's servers sit.
type classView struct {
	table      classify.Table
	thresholds jobtype.Thresholds // from the workload and the classes' capacity
	ranges     [][2]int           // servers of each class; the last: unclassified
	classOf    []int              // class of each tenant; -1 unclassified
}

// classifyTenants runs the placer's classifier over the (scaled) history
// window of every tenant.
func classifyTenants(cfg Config) *classView {
	hist := cfg.HistoryDays * history.SlotsPerDay
	inputs := make([]classify.Input, len(cfg.Tenants))
	for i, t := range cfg.Tenants {
		v := make([]float64, hist)
		for k := range v {
			v[k] = Scale(cfg.Scaling, cfg.Factor, t.Series.Values[k])
		}
		inputs[i] = classify.Input{Tenant: t.ID, Series: history.Series{Start: t.Series.Start, Values: v}}
		for k := 0; k < t.Servers; k++ {
			inputs[i].Nodes = append(inputs[i].Nodes, t.ID+"/"+itoa(k))
		}
	}
	cv := &classView{table: classify.Classify(inputs, classify.Default()), classOf: make([]int, len(cfg.Tenants))}
	index := map[string]int{}
	for ci, c := range cv.table.Classes {
		for _, t := range c.Tenants {
			index[t] = ci
		}
	}
	for i, t := range cfg.Tenants {
		cv.classOf[i] = -1
		if ci, ok := index[t.ID]; ok {
			cv.classOf[i] = ci
		}
	}
	return cv
}

// layOut creates the servers grouped by class (unclassified last), so each
// class is one range of the placement trees.
func (s *sim) layOut() {
	cv := s.classes
	n := len(cv.table.Classes)
	order := make([]int, len(s.cfg.Tenants))
	for i := range order {
		order[i] = i
	}
	key := func(t int) int {
		if c := cv.classOf[t]; c >= 0 {
			return c
		}
		return n
	}
	sort.SliceStable(order, func(a, b int) bool { return key(order[a]) < key(order[b]) })
	cv.ranges = make([][2]int, n+1)
	for c := range cv.ranges {
		cv.ranges[c] = [2]int{-1, -1}
	}
	for _, t := range order {
		c := key(t)
		if cv.ranges[c][0] < 0 {
			cv.ranges[c][0] = len(s.servers)
		}
		for k := 0; k < s.cfg.Tenants[t].Servers; k++ {
			s.byTenant[t] = append(s.byTenant[t], len(s.servers))
			class := c
			if c == n {
				class = -1
			}
			s.servers = append(s.servers, server{tenant: t, class: class})
		}
		cv.ranges[c][1] = len(s.servers)
	}
	for c := range cv.ranges {
		if cv.ranges[c][0] < 0 {
			cv.ranges[c] = [2]int{0, 0}
		}
	}
}

// splitThresholds sets the job-type thresholds as the paper does (L140):
// each type's share of the work is its preferred classes' share of the
// room, the room of a class being what the driver would admit on its
// servers at its average utilisation for that type (classify.ServerRoom),
// over a sample of the workload's (scaled) jobs.
func (s *sim) splitThresholds() jobtype.Thresholds {
	w := selectclass.DefaultWeights()
	capacity := map[string]float64{}
	var total float64
	for _, typ := range jobTypes {
		best, bestW := "", 0.0
		for pattern, weight := range w[typ] {
			if weight > bestW || weight == bestW && pattern < best {
				best, bestW = pattern, weight
			}
		}
		for ci, c := range s.classes.table.Classes {
			if string(c.Pattern) != best {
				continue
			}
			r := s.classes.ranges[ci]
			at := classify.Server{Cores: float64(s.cfg.Cores), Reserve: s.cfg.Reserve + s.cfg.AdmitMargin,
				Primary: c.Average / 100 * float64(s.cfg.Cores)}
			capacity[typ] += float64(r[1]-r[0]) * s.serverRoom(classify.JobType(typ), c, at)
		}
		total += capacity[typ]
	}
	if total == 0 {
		return jobtype.Default()
	}
	rng := rand.New(rand.NewPCG(s.cfg.Seed, 0x7e5))
	runs := make([]jobtype.Run, 4000)
	for i := range runs {
		j := s.cfg.Mix.draw(rng).scaled(s.scale, rng)
		runs[i] = jobtype.Run{Length: seconds(j.length()), Work: j.coreSeconds()}
	}
	return jobtype.Split(runs, capacity[jobtype.Short]/total, capacity[jobtype.Long]/total)
}

// serverRoom is a server's room for Algorithm 1 by the configured rule.
func (s *sim) serverRoom(t classify.JobType, c classify.Class, at classify.Server) float64 {
	if s.cfg.Room == RoomPaper {
		return classify.PaperRoom(t, c, at)
	}
	return classify.ServerRoom(t, c, at)
}

// typeOf is a job's type: by its length against the thresholds (L3, L140:
// the job is taken to have run before with the same length), or with
// TypeByClass its class in the mix where that is a type.
func (s *sim) typeOf(j *job) string {
	if s.cfg.TypeByClass {
		for _, name := range jobTypes {
			if name == j.spec.class {
				return name
			}
		}
	}
	return s.classes.thresholds.Of(seconds(j.spec.length()), true)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// choose runs Algorithm 1 for a job: its type from its length (line 3; the
// job is taken to have run before with the same length), its widest stage
// as the request (line 4, the DAG's breadth-first peak for a chain), and
// each class's room for that type, summed over its servers as the driver
// would admit it now (classify.ServerRoom: running containers count, the
// waiting queue does not). It returns the classes (nil: none, line 16) and
// the fit.
func (s *sim) choose(j *job) ([]int, string) {
	typ := s.typeOf(j)
	for k, name := range jobTypes {
		if name == typ {
			j.typ = k
		}
	}
	cands := make([]selectclass.Candidate, 0, len(s.classes.table.Classes))
	for ci, c := range s.classes.table.Classes {
		r := s.classes.ranges[ci]
		var room float64
		for i := r[0]; i < r[1]; i++ {
			sv := &s.servers[i]
			room += s.serverRoom(classify.JobType(typ), c, classify.Server{Cores: float64(s.cfg.Cores),
				Reserve: s.cfg.Reserve + s.cfg.AdmitMargin, Primary: sv.primary, Allocated: float64(len(sv.held))})
		}
		cands = append(cands, selectclass.Candidate{Class: c.Name, Pattern: string(c.Pattern), RoomCPU: room * 1000})
	}
	out := selectclass.Select(typ, selectclass.Request{CPU: float64(j.spec.peak()) * 1000}, cands, selectclass.DefaultWeights(), s.rng)
	if len(out.Classes) == 0 {
		return nil, out.Fit
	}
	var set []int
	for ci, c := range s.classes.table.Classes {
		for _, name := range out.Classes {
			if c.Name == name {
				set = append(set, ci)
			}
		}
	}
	return set, out.Fit
}

// admit starts a job that just arrived. Under H it first runs Algorithm 1;
// a job no class can take runs at once under the default placement (L220),
// or, with HoldUnfit, waits for a slot where it fits.
func (s *sim) admit(j *job) {
	if len(j.spec.stages) == 0 {
		s.jobDone(j)
		return
	}
	if s.cfg.Policy == History {
		classes, fit := s.choose(j)
		s.res.Fits[fit]++
		s.classResult(j.spec.class).Fits[jobTypes[j.typ]+"/"+fit]++
		if classes == nil && s.cfg.HoldUnfit {
			s.unfit = append(s.unfit, j)
			return
		}
		s.label(j, classes)
	}
	s.releaseStage(j)
}

// label gives a job its classes and their servers.
func (s *sim) label(j *job, classes []int) {
	j.classes = classes
	j.ranges = nil
	for _, c := range classes {
		j.ranges = append(j.ranges, s.classes.ranges[c])
	}
}

// retryUnfit (HoldUnfit) runs Algorithm 1 again for the held jobs, oldest
// first, and starts those that now fit; the rest keep their order.
func (s *sim) retryUnfit() {
	held := s.unfit
	s.unfit = nil
	for k, j := range held {
		classes, _ := s.choose(j)
		if classes == nil {
			s.unfit = append(s.unfit, held[k:]...)
			return
		}
		s.label(j, classes)
		s.releaseStage(j)
	}
}

func (s *sim) patternOf(i int) string {
	if c := s.servers[i].class; c >= 0 {
		return string(s.classes.table.Classes[c].Pattern)
	}
	return "unclassified"
}
