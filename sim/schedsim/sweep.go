package schedsim

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/harvest-platform/harvest/placer/classify"
)

// Stat is a quantity's mean, minimum and maximum over a point's seeds.
type Stat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// StatOf is v's mean, minimum and maximum (zero for no values).
func StatOf(v []float64) Stat {
	if len(v) == 0 {
		return Stat{}
	}
	s := Stat{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range v {
		s.Mean += x / float64(len(v))
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	return s
}

// Point is one operating point of a sweep: the runs of one source,
// scaling, factor and policy over its seeds.
type Point struct {
	Source      string  `json:"source"`
	Scaling     Scaling `json:"scaling"`
	Factor      float64 `json:"factor"`
	Policy      Policy  `json:"policy"`
	Seeds       int     `json:"seeds"`
	PrimaryUtil float64 `json:"primary_utilisation"` // mean over seeds
	Utilisation float64 `json:"utilisation"`
	// JobSeconds is the censored mean job time (unfinished jobs at their
	// age), the figure the paper plots (job time including queueing).
	JobSeconds Stat `json:"job_seconds"`
	Evicted    Stat `json:"containers_evicted"`
	Wasted     Stat `json:"wasted_core_hours"`
	Unfinished Stat `json:"unfinished"`
	Saturated  int  `json:"saturated_seeds"` // seeds whose queue grew without bound
	// LongFitOne counts the workload's long jobs (the mix's class, whatever
	// the placer typed them) to which Algorithm 1 gave exactly one class
	// (H only); LongOnConstant is the share of the long jobs' finished task
	// time that ran on servers of constant tenants. Together they say
	// whether the jobs H means to steer were steered at all.
	LongFitOne     Stat `json:"long_jobs_fit_one_class"`
	LongOnConstant Stat `json:"long_work_on_constant_share"`
}

// longJobsSteered is r's count of long jobs that Algorithm 1 fit in one
// class and the share of their task time on constant servers.
func longJobsSteered(r Result) (fitOne, onConstant float64) {
	c := r.ByJobClass["long"]
	if c == nil {
		return 0, 0
	}
	for k, n := range c.Fits {
		if strings.HasSuffix(k, "/one") {
			fitOne += float64(n)
		}
	}
	var total float64
	for _, sec := range c.TaskSecondsByPattern {
		total += sec
	}
	if total > 0 {
		onConstant = c.TaskSecondsByPattern[string(classify.Constant)] / total
	}
	return fitOne, onConstant
}

// Points groups results by source, scaling, factor and policy, in the
// order they first appear.
func Points(results []Result) []Point {
	type key struct {
		src string
		sc  Scaling
		f   float64
		p   Policy
	}
	var order []key
	runs := map[key][]Result{}
	for _, r := range results {
		k := key{r.Source, r.Scaling, r.Factor, r.Policy}
		if _, ok := runs[k]; !ok {
			order = append(order, k)
		}
		runs[k] = append(runs[k], r)
	}
	out := make([]Point, 0, len(order))
	for _, k := range order {
		rs := runs[k]
		p := Point{Source: k.src, Scaling: k.sc, Factor: k.f, Policy: k.p, Seeds: len(rs)}
		var jt, ev, wa, un, fit, onConst []float64
		for _, r := range rs {
			f, c := longJobsSteered(r)
			fit, onConst = append(fit, f), append(onConst, c)
			p.PrimaryUtil += r.PrimaryUtil / float64(len(rs))
			p.Utilisation += r.Utilisation / float64(len(rs))
			jt = append(jt, r.CensoredMeanJobSeconds)
			ev = append(ev, float64(r.Evicted))
			wa = append(wa, r.WastedTaskSeconds/3600)
			un = append(un, float64(r.Unfinished))
			if r.Saturated {
				p.Saturated++
			}
		}
		p.JobSeconds, p.Evicted, p.Wasted, p.Unfinished = StatOf(jt), StatOf(ev), StatOf(wa), StatOf(un)
		p.LongFitOne, p.LongOnConstant = StatOf(fit), StatOf(onConst)
		out = append(out, p)
	}
	return out
}

// Gain is H against PT at one operating point.
type Gain struct {
	Source      string  `json:"source"`
	Scaling     Scaling `json:"scaling"`
	Factor      float64 `json:"factor"`
	Utilisation float64 `json:"utilisation"` // PT's
	// Reduction is 100 x (PT - H) / PT of the seeds' mean job times:
	// positive when H's jobs are faster.
	Reduction float64 `json:"reduction_percent"`
	// EvictionRatio is PT's evictions over H's (mean over seeds); infinite
	// when H evicted nothing and PT did.
	EvictionRatio Ratio `json:"eviction_ratio"`
	// Stable: no seed of either policy saturated.
	Stable bool `json:"stable"`
}

// Gains pairs the PT and H points of a sweep.
func Gains(points []Point) []Gain {
	type key struct {
		src string
		sc  Scaling
		f   float64
	}
	pt := map[key]Point{}
	for _, p := range points {
		if p.Policy == PT {
			pt[key{p.Source, p.Scaling, p.Factor}] = p
		}
	}
	var out []Gain
	for _, h := range points {
		p, ok := pt[key{h.Source, h.Scaling, h.Factor}]
		if h.Policy != History || !ok || p.JobSeconds.Mean <= 0 {
			continue
		}
		g := Gain{Source: h.Source, Scaling: h.Scaling, Factor: h.Factor, Utilisation: p.Utilisation,
			Reduction: 100 * (p.JobSeconds.Mean - h.JobSeconds.Mean) / p.JobSeconds.Mean,
			Stable:    p.Saturated == 0 && h.Saturated == 0, EvictionRatio: Ratio(math.Inf(1))}
		if h.Evicted.Mean > 0 {
			g.EvictionRatio = Ratio(p.Evicted.Mean / h.Evicted.Mean)
		} else if p.Evicted.Mean == 0 {
			g.EvictionRatio = 1
		}
		out = append(out, g)
	}
	return out
}

// Ratio is a ratio that may be infinite, which JSON, having no infinity,
// carries as null.
type Ratio float64

// MarshalJSON writes null for an infinite or undefined ratio.
func (r Ratio) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 0) || math.IsNaN(float64(r)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(r))
}

// Summary is a source's gains over its sweep under one scaling, the bars of
// the paper's Figure 14: over the stable operating points, the average,
// smallest and largest reduction.
type Summary struct {
	Source    string  `json:"source"`
	Scaling   Scaling `json:"scaling"`
	Reduction Stat    `json:"reduction_percent"`
	Points    int     `json:"stable_points"`
	Skipped   int     `json:"saturated_points"` // left out: a policy's queue grew without bound
}

// Summarise averages the stable gains per source and scaling.
func Summarise(gains []Gain) []Summary {
	type key struct {
		src string
		sc  Scaling
	}
	red := map[key][]float64{}
	skipped := map[key]int{}
	var order []key
	for _, g := range gains {
		k := key{g.Source, g.Scaling}
		if _, ok := red[k]; !ok {
			order = append(order, k)
			red[k] = nil
		}
		if !g.Stable {
			skipped[k]++
			continue
		}
		red[k] = append(red[k], g.Reduction)
	}
	sort.SliceStable(order, func(a, b int) bool {
		if order[a].src != order[b].src {
			return order[a].src < order[b].src
		}
		return order[a].sc < order[b].sc
	})
	var out []Summary
	for _, k := range order {
		out = append(out, Summary{Source: k.src, Scaling: k.sc, Reduction: StatOf(red[k]), Points: len(red[k]), Skipped: skipped[k]})
	}
	return out
}

// String is a one-line reading of a gain, signed so that it cannot be
// misread: "H 12.3% faster" or "H 2.0% slower".
func (g Gain) String() string {
	word, v := "faster", g.Reduction
	if v < 0 {
		word, v = "slower", -v
	}
	return fmt.Sprintf("H %.1f%% %s than PT", v, word)
}
