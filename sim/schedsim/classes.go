package schedsim

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// classView is H's knowledge: the class table the placer's classifier
// builds from the history window, and each class's servers.
type classView struct {
	table      classify.Table
	thresholds jobtype.Thresholds // from the workload and the classes' capacity
	members    [][]int            // servers per class
	cache      map[string][]int
	primary    []float64 // cores the members' primaries use now (updated every slot)
	committed  []float64 // cores the tasks of jobs sent to the class use or wait for
}

// classifyTenants runs the placer's classifier over the (scaled) history
// window and assigns each server its tenant's class.
func (s *sim) classifyTenants() {
	hist := s.cfg.HistoryDays * history.SlotsPerDay
	inputs := make([]classify.Input, len(s.cfg.Tenants))
	for i, t := range s.cfg.Tenants {
		v := make([]float64, hist)
		for k := range v {
			v[k] = Scale(s.cfg.Scaling, s.cfg.Factor, t.Series.Values[k])
		}
		inputs[i] = classify.Input{Tenant: t.ID, Series: history.Series{Start: t.Series.Start, Values: v}}
		for _, sv := range s.byTenant[i] {
			inputs[i].Nodes = append(inputs[i].Nodes, "s"+itoa(sv))
		}
	}
	cv := &classView{table: classify.Classify(inputs, classify.Default()), cache: map[string][]int{}}
	classOf := map[string]int{}
	for ci, c := range cv.table.Classes {
		for _, t := range c.Tenants {
			classOf[t] = ci
		}
	}
	cv.members = make([][]int, len(cv.table.Classes))
	cv.primary = make([]float64, len(cv.table.Classes))
	cv.committed = make([]float64, len(cv.table.Classes))
	for i := range s.servers {
		sv := &s.servers[i]
		sv.class = -1
		if ci, ok := classOf[s.cfg.Tenants[sv.tenant].ID]; ok {
			sv.class = ci
			cv.members[ci] = append(cv.members[ci], i)
		}
	}
	s.classes = cv
	cv.thresholds = s.cfg.Thresholds
	if cv.thresholds == (jobtype.Thresholds{}) {
		cv.thresholds = s.splitThresholds()
	}
}

// splitThresholds sets the job-type thresholds as the paper does (Section
// 4.1): each type's share of the work is its preferred classes' share of
// the harvestable capacity (long: the pattern Algorithm 1's weights rank
// first for long jobs, and so on), over a sample of the workload's jobs.
func (s *sim) splitThresholds() jobtype.Thresholds {
	w := selectclass.DefaultWeights()
	capacity := map[string]float64{}
	var total float64
	for _, typ := range []string{jobtype.Short, jobtype.Medium, jobtype.Long} {
		best, bestW := "", 0.0
		for pattern, weight := range w[typ] {
			if weight > bestW || weight == bestW && pattern < best {
				best, bestW = pattern, weight
			}
		}
		for ci, c := range s.classes.table.Classes {
			if string(c.Pattern) == best {
				room := float64(s.cfg.Cores)*classify.Headroom(classify.JobType(typ), c, c.Average) - s.cfg.Reserve
				capacity[typ] += float64(len(s.classes.members[ci])) * max(0, room)
			}
		}
		total += capacity[typ]
	}
	if total == 0 {
		return jobtype.Default()
	}
	rng := rand.New(rand.NewPCG(s.cfg.Seed, 0x7e5))
	runs := make([]jobtype.Run, 4000)
	for i := range runs {
		j := s.cfg.Mix.draw(rng)
		runs[i] = jobtype.Run{Length: time.Duration(j.length() * float64(time.Second)), Work: j.coreSeconds(1)}
	}
	return jobtype.Split(runs, capacity[jobtype.Short]/total, capacity[jobtype.Long]/total)
}

// choose runs Algorithm 1 for a job: its type from its length (the
// placer's thresholds), its peak concurrency as the request, and for each
// class its headroom for that type at the class's current utilisation,
// which counts the harvested tasks already sent there (as the live node
// stats the placer reads would). It returns the classes (nil: none fits)
// and the fit.
func (s *sim) choose(j *job) (map[int]bool, string) {
	spec := j.spec
	typ := s.classes.thresholds.Of(time.Duration(spec.length()*float64(time.Second)), true)
	for k, name := range jobTypes {
		if name == typ {
			j.typ = k
		}
	}
	var cands []selectclass.Candidate
	for ci, c := range s.classes.table.Classes {
		m := s.classes.members[ci]
		if len(m) == 0 {
			continue
		}
		current := min(100, 100*(s.classes.primary[ci]+s.classes.committed[ci])/float64(len(m)*s.cfg.Cores))
		room := classify.Headroom(classify.JobType(typ), c, current)
		// the reserve is never the job's: take it off the class's capacity
		cores := float64(len(m)) * (float64(s.cfg.Cores) - s.cfg.Reserve)
		cands = append(cands, selectclass.Candidate{Class: c.Name, Pattern: string(c.Pattern),
			RoomCPU: room * cores * 1000, RoomMemoryMB: room * float64(len(m)) * s.cfg.MemoryMiB})
	}
	out := selectclass.Select(typ, selectclass.Request{CPU: float64(spec.peak()) * 1000, MemoryMB: float64(spec.peak()) * taskMiB},
		cands, selectclass.DefaultWeights(), s.rng)
	if len(out.Classes) == 0 {
		return nil, out.Fit
	}
	set := map[int]bool{}
	for ci, c := range s.classes.table.Classes {
		for _, name := range out.Classes {
			if c.Name == name {
				set[ci] = true
			}
		}
	}
	return set, out.Fit
}

// admitJob starts a job that just arrived. Under H it first runs Algorithm
// 1; a job no class combination can take (line 16) is not started but waits
// for the next slot's headrooms, as the paper's scheduler holds it. Fits
// counts each job once, by its first outcome.
func (s *sim) admitJob(j *job) {
	if s.cfg.Policy == History {
		var fit string
		j.classes, fit = s.choose(j)
		s.res.Fits[fit]++
		if j.classes == nil {
			s.unplaced = append(s.unplaced, j)
			return
		}
		j.pool = s.classes.servers(j.classes)
	}
	s.releaseStage(j)
}

// retryUnplaced runs Algorithm 1 again for the jobs still waiting, oldest
// first, and starts those that now fit.
func (s *sim) retryUnplaced() {
	waiting := s.unplaced
	s.unplaced = nil
	for k, j := range waiting {
		if j.classes, _ = s.choose(j); j.classes == nil {
			s.unplaced = append(s.unplaced, waiting[k:]...) // keep the order: no overtaking
			return
		}
		j.pool = s.classes.servers(j.classes)
		s.releaseStage(j)
	}
}

// commit adds (tasks > 0) or removes a job's outstanding tasks (running
// or waiting for a core) to or from its classes' load, shared evenly.
func (s *sim) commit(j *job, tasks int) {
	if j.classes == nil {
		return
	}
	for ci := range j.classes {
		s.classes.committed[ci] += float64(tasks) / float64(len(j.classes))
	}
}

// servers lists the servers of a set of classes (cached per set).
func (cv *classView) servers(set map[int]bool) []int {
	key := ""
	for ci := range cv.members {
		if set[ci] {
			key += itoa(ci) + ","
		}
	}
	if out, ok := cv.cache[key]; ok {
		return out
	}
	var out []int
	for ci, m := range cv.members {
		if set[ci] {
			out = append(out, m...)
		}
	}
	cv.cache[key] = out
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
