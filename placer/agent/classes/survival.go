package classes

import (
	"cmp"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/survival"
)

// WireClass is the classifier's class as the class table keeps it,
// without its history's node names (the API serves Nomad's).
func WireClass(c classify.Class) api.Class {
	return api.Class{Name: c.Name, Pattern: string(c.Pattern), Average: c.Average, Peak: c.Peak, Current: c.Current,
		Tenants: c.Tenants}
}

// ClassifierClass is a class table's class as Algorithm 1 ranks it.
func ClassifierClass(c api.Class) classify.Class {
	return classify.Class{Name: c.Name, Pattern: classify.Pattern(c.Pattern), Average: c.Average, Peak: c.Peak,
		Current: c.Current, Tenants: c.Tenants, Nodes: c.Nodes}
}

// wireProbability is p as JSON carries it: nil when unknown.
func wireProbability(p survival.Probability) *float64 {
	if !p.Known() {
		return nil
	}
	v := float64(p)
	return &v
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
	return survival.Server{Cores: cores, Reserve: reserve, Margin: margin}, true
}

// medianServer is the middle server by cores, then reserve, then margin
// (the lower of the two middles for an even count): a node that exists,
// not an average of sizes no node has.
func medianServer(sizes []survival.Server) survival.Server {
	slices.SortFunc(sizes, func(a, b survival.Server) int {
		return cmp.Or(cmp.Compare(a.Cores, b.Cores), cmp.Compare(a.Reserve, b.Reserve), cmp.Compare(a.Margin, b.Margin))
	})
	return sizes[(len(sizes)-1)/2]
}

// Survival gives every class its survival figures: each member
// tenant's series over the classifier's window (percent, its node count as
// its weight) replayed by survival.Curve on the median server of the class's
// Nomad nodes (a node belongs to the class of the tenant its meta names).
// Classes are computed in parallel, the largest first; each tenant is
// replayed once, so the cost is O(slots x tenants) in all, or, with sample
// > 0, O(slots x classes x sample): a class of more members replays a
// priority sample of them (sampleMembers), weighted to stand for the rest.
func Survival(classes []classify.Class, inputs []classify.Input, window time.Duration,
	nodes []labels.Node, th jobtype.Thresholds, sample int) []api.Class {
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
	all := make([][]classify.Input, len(classes))
	for _, in := range inputs {
		if i, ok := classOf[in.Tenant]; ok {
			all[i] = append(all[i], in)
		}
	}
	members := make([][]sampled, len(classes))
	for i := range all {
		members[i] = sampleMembers(all[i], sample)
	}
	out := make([]api.Class, len(classes))
	order := make([]int, len(classes))
	for i := range classes {
		out[i] = WireClass(classes[i])
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
				fillSurvival(&out[i], members[i], window, sizes[i], th)
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

// sampled is a class member the survival replay replays, with its weight
// in the class's figures.
type sampled struct {
	classify.Input
	weight float64
}

// sampleMembers keeps, of more than n members (n > 0), n by priority
// sampling (Duffield, Lund and Thorup, "Priority sampling for estimation
// of arbitrary subset sums", J. ACM 54(6), 2007): member i, of weight w_i
// (its nodes), has priority w_i / u_i, u_i in (0, 1] from a hash of its
// name (nameHash); the n of highest priority are kept, each weighing
// max(w_i, tau), tau the (n+1)-th priority. Each of the figure's two sums (tasks
// ended, tasks killed, node-weighted) is then estimated without bias, and
// a member holding much of the class's weight is always kept, which a
// uniform draw would miss. The hash makes the sample the same at every
// refresh, whatever the members' order, so a class's figures do not jitter
// from one day to the next for want of a seed. n <= 0 or a smaller class:
// every member at its own weight.
func sampleMembers(members []classify.Input, n int) []sampled {
	out := make([]sampled, len(members))
	for i, m := range members {
		out[i] = sampled{m, float64(max(1, len(m.Nodes)))}
	}
	if n <= 0 || len(members) <= n {
		return out
	}
	priority := make([]float64, len(out))
	for i, m := range out {
		u := (float64(nameHash(m.Tenant)>>11) + 1) / (1 << 53) // in (0, 1]
		priority[i] = m.weight / u
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(priority[b], priority[a]), cmp.Compare(out[a].Tenant, out[b].Tenant))
	})
	tau := priority[order[n]]
	kept := order[:n]
	slices.Sort(kept) // the members' own order
	res := make([]sampled, n)
	for k, i := range kept {
		res[k] = sampled{out[i].Input, max(out[i].weight, tau)}
	}
	return res
}

// nameHash is FNV-1a of name through MurmurHash3's 64-bit finaliser:
// FNV alone leaves the high bits of names that differ in their last
// characters (env/t0001, env/t0002, ...) close together, so a share
// drawn from them would not be uniform.
func nameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// fillSurvival replays one class's members on its median server.
func fillSurvival(c *api.Class, members []sampled, window time.Duration, sizes []survival.Server, th jobtype.Thresholds) {
	if len(sizes) == 0 {
		c.SurvivalUnavailable = noDriverSize
		return
	}
	srv := medianServer(sizes)
	c.SurvivalServer = &api.SurvivalServer{Cores: srv.Cores, Reserve: srv.Reserve, Margin: srv.Margin, Nodes: len(sizes)}
	// each member's window, what classify.Extract read, loaded one at a time
	var full []float64 // the whole loaded series, reused (Percent is a tail of it)
	get := func(i int, _ []float64) survival.Series {
		s := members[i].Window(full)
		full = s.Values
		w := s.TrimLeadingGaps().Last(window)
		return survival.Series{Percent: w.Values, Weight: members[i].weight}
	}
	curve := survival.CurveOf(len(members), get, srv, history.Slot, survival.DefaultLengths(), nil)
	c.Survival = make([]api.SurvivalPoint, len(curve))
	for i, p := range curve {
		c.Survival[i] = api.SurvivalPoint{Length: p.Length, Probability: wireProbability(p.Probability), Tasks: p.Tasks}
	}
	c.SurvivalByJobType = map[string]api.JobTypeSurvival{}
	for typ, l := range map[string]time.Duration{jobtype.Short: th.Short, jobtype.Medium: th.Long, jobtype.Long: 2 * th.Long} {
		c.SurvivalByJobType[typ] = api.JobTypeSurvival{Length: l, Probability: wireProbability(survivalAt(curve, l))}
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
