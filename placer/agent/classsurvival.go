package agent

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/survival"
)

// StoredClass is one class of the stored table: the classifier's class and
// how likely a harvested task is to survive on it (placer/survival).
type StoredClass struct {
	classify.Class
	// Survival is, for each length of survival.DefaultLengths, the
	// server-weighted share of the tasks of about that length that ran to
	// their end when the class's history window was replayed on a full
	// server of the class's typical size with youngest-first kills, the
	// grid's lengths started in equal numbers. A server that is not full
	// does better: it is a lower bound when harvesting is not in demand.
	Survival []survival.Point `json:"survival,omitempty"`
	// SurvivalByJobType is one figure per job type, read off Survival at
	// the length a job of the type runs at most (short: the short
	// threshold, medium: the long threshold) or, for long jobs, at twice
	// the long threshold.
	SurvivalByJobType map[string]JobTypeSurvival `json:"survival_by_job_type,omitempty"`
	// SurvivalServer is the server the history was replayed on.
	SurvivalServer *SurvivalServer `json:"survival_server,omitempty"`
	// SurvivalUnavailable says why the class has no survival figures.
	SurvivalUnavailable string `json:"survival_unavailable,omitempty"`
}

// JobTypeSurvival is the survival of a task of Length.
type JobTypeSurvival struct {
	Length      time.Duration        `json:"length"`
	Probability survival.Probability `json:"probability"`
}

// SurvivalServer is a class's typical server as the harvest driver on its
// median node (by cores, then reserve) reports it.
type SurvivalServer struct {
	Cores float64 `json:"cores"`
	// Reserve is the driver's effective CPU reserve plus its admission
	// margin: a task starts only with both free, so a full server's tasks
	// leave that much to the primary.
	Reserve float64 `json:"reserve_cores"`
	Nodes   int     `json:"nodes"` // the class's nodes that report the driver's size
}

// noDriverSize is why a class whose nodes report no driver size has no
// survival figures: guessing a server would publish numbers no node runs.
const noDriverSize = "no node of the class reports the harvest driver's capacity and reserve (" +
	contract.AttrCapacityCores + ", " + contract.AttrReserveCores + ")"

// driverSize reads a node's harvest driver size from its attributes.
func driverSize(attrs map[string]string) (survival.Server, bool) {
	num := func(k string) (float64, bool) {
		v := strings.TrimSpace(attrs[k])
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil && v != "" && f >= 0 && !math.IsInf(f, 0)
	}
	cores, ok1 := num(contract.AttrCapacityCores)
	reserve, ok2 := num(contract.AttrReserveCores)
	if !ok1 || !ok2 || cores <= 0 {
		return survival.Server{}, false
	}
	margin, _ := num(contract.AttrAdmitMarginCores) // a driver too old to publish it: none
	return survival.Server{Cores: cores, Reserve: reserve + margin}, true
}

// medianServer is the middle server by cores, then reserve (the lower of
// the two middles for an even count): a node that exists, not an average
// of sizes no node has.
func medianServer(sizes []survival.Server) survival.Server {
	slices.SortFunc(sizes, func(a, b survival.Server) int {
		return cmp.Or(cmp.Compare(a.Cores, b.Cores), cmp.Compare(a.Reserve, b.Reserve))
	})
	return sizes[(len(sizes)-1)/2]
}

// classSurvival gives every class its survival figures: each member
// tenant's series over the classifier's window (percent, its node count as
// its weight) replayed by survival.Curve on the median server of the class's
// Nomad nodes (a node belongs to the class of the tenant its meta names).
// Classes are computed in parallel, the largest first; each tenant is
// replayed once, so the cost is O(slots x tenants) in all.
func classSurvival(classes []classify.Class, inputs []classify.Input, window time.Duration,
	nodes []labels.Node, th jobtype.Thresholds) []StoredClass {
	classOf := map[string]int{}
	for i, c := range classes {
		for _, t := range c.Tenants {
			classOf[t] = i
		}
	}
	sizes := make([][]survival.Server, len(classes))
	for _, n := range nodes {
		i, ok := classOf[n.Meta[labels.TenantKey]]
		if !ok {
			continue
		}
		if s, ok := driverSize(n.Attributes); ok {
			sizes[i] = append(sizes[i], s)
		}
	}
	members := make([][]classify.Input, len(classes))
	for _, in := range inputs {
		if i, ok := classOf[in.Tenant]; ok {
			members[i] = append(members[i], in)
		}
	}

	out := make([]StoredClass, len(classes))
	order := make([]int, len(classes))
	for i := range classes {
		out[i] = StoredClass{Class: classes[i]}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(members[b]), len(members[a])) })
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(classes)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i].fillSurvival(members[i], window, sizes[i], th)
			}
		}()
	}
	for _, i := range order {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// fillSurvival replays one class's members on its median server.
func (c *StoredClass) fillSurvival(members []classify.Input, window time.Duration, sizes []survival.Server, th jobtype.Thresholds) {
	if len(sizes) == 0 {
		c.SurvivalUnavailable = noDriverSize
		return
	}
	srv := medianServer(sizes)
	c.SurvivalServer = &SurvivalServer{Cores: srv.Cores, Reserve: srv.Reserve, Nodes: len(sizes)}
	// each member's window, what classify.Extract read, loaded one at a time
	var full []float64 // the whole loaded series, reused (Percent is a tail of it)
	get := func(i int, _ []float64) survival.Series {
		s := members[i].Window(full)
		full = s.Values
		w := s.TrimLeadingGaps().Last(window)
		return survival.Series{Percent: w.Values, Servers: len(members[i].Nodes)}
	}
	c.Survival = survival.CurveOf(len(members), get, srv, history.Slot, survival.DefaultLengths(), nil)
	c.SurvivalByJobType = map[string]JobTypeSurvival{}
	for typ, l := range map[string]time.Duration{jobtype.Short: th.Short, jobtype.Medium: th.Long, jobtype.Long: 2 * th.Long} {
		c.SurvivalByJobType[typ] = JobTypeSurvival{Length: l, Probability: survivalAt(c.Survival, l)}
	}
}

// survivalAt reads a curve at length l: between two of its lengths,
// linearly in log(length) (the grid is close to geometric); before the
// first or after the last, that end's figure. Unknown when a point it
// needs is.
func survivalAt(curve []survival.Point, l time.Duration) survival.Probability {
	unknown := survival.Probability(math.NaN())
	if len(curve) == 0 {
		return unknown
	}
	k := 0
	for k < len(curve) && curve[k].Length < l {
		k++
	}
	switch {
	case k == 0:
		return curve[0].Probability
	case k == len(curve):
		return curve[k-1].Probability
	case curve[k].Length == l:
		return curve[k].Probability
	}
	lo, hi := curve[k-1], curve[k]
	if !lo.Probability.Known() || !hi.Probability.Known() {
		return unknown
	}
	f := math.Log(float64(l)/float64(lo.Length)) / math.Log(float64(hi.Length)/float64(lo.Length))
	return lo.Probability + survival.Probability(f)*(hi.Probability-lo.Probability)
}
