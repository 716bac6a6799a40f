package schedsim

import (
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
	table     classify.Table
	members   [][]int // servers per class
	cache     map[string][]int
	primary   []float64 // cores the members' primaries use now (updated every slot)
	committed []float64 // cores at the peak of the jobs placed in the class and not done
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
}

// choose runs Algorithm 1 for a job: its type from its length (the
// placer's thresholds), its peak concurrency as the request, and for each
// class its headroom for that type at the class's current utilisation,
// which counts the harvested jobs already sent there (as the live node
// stats the placer reads would). No fit leaves the job unconstrained, as
// the proxy does.
func (s *sim) choose(spec jobSpec) map[int]bool {
	typ := jobtype.Default().Of(time.Duration(spec.length()*float64(time.Second)), true)
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
		cands = append(cands, selectclass.Candidate{Class: c.Name, Pattern: string(c.Pattern), Headroom: room,
			CPU: cores * 1000, MemoryMB: float64(len(m)) * s.cfg.MemoryMiB})
	}
	out := selectclass.Select(typ, selectclass.Request{CPU: float64(spec.peak()) * 1000, MemoryMB: float64(spec.peak() * taskMiB)},
		cands, selectclass.DefaultWeights(), s.rng)
	s.res.Fits[out.Fit]++
	if len(out.Classes) == 0 {
		return nil
	}
	set := map[int]bool{}
	for ci, c := range s.classes.table.Classes {
		for _, name := range out.Classes {
			if c.Name == name {
				set[ci] = true
			}
		}
	}
	s.commit(set, spec, 1)
	return set
}

// commit adds (sign 1) or removes (-1) a job's peak from its classes.
func (s *sim) commit(set map[int]bool, spec jobSpec, sign float64) {
	for ci := range set {
		s.classes.committed[ci] += sign * float64(spec.peak()) / float64(len(set))
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
