package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"github.com/harvest-platform/harvest/history"
)

// Input is one tenant to classify.
type Input struct {
	Tenant string // environment/function
	Nodes  []string
	Series history.Series
	// Load, when set, gives the series on demand instead of Series, into
	// buf when it fits: a datacenter's windows (10,000 tenants x 30 days of
	// float64 is 1.7 GB) need not all be in memory at once.
	Load func(buf []float64) history.Series
}

// Window returns the input's series (loading it into buf if need be).
func (in Input) Window(buf []float64) history.Series {
	if in.Load != nil {
		return in.Load(buf)
	}
	return in.Series
}

// Class is a group of tenants with similar utilisation.
type Class struct {
	Name    string   `json:"name"` // e.g. "periodic-2"
	Pattern Pattern  `json:"pattern"`
	Average float64  `json:"average"` // percent, node-weighted mean of members' means
	Peak    float64  `json:"peak"`    // percent, node-weighted mean of members' peaks
	Current float64  `json:"current"` // percent, node-weighted mean of members' latest hour
	Tenants []string `json:"tenants"`
	Nodes   []string `json:"nodes"`
}

// TenantResult is what the classifier decided about one tenant.
type TenantResult struct {
	Tenant   string   `json:"tenant"`
	Pattern  Pattern  `json:"pattern,omitempty"`
	Class    string   `json:"class,omitempty"`
	Reason   string   `json:"unclassified_reason,omitempty"`
	Features Features `json:"features"`
}

// Table is the outcome of one classification run.
type Table struct {
	Classes []Class        `json:"classes"`
	Tenants []TenantResult `json:"tenants"` // in tenant order
}

// Class returns the class named name.
func (t *Table) Class(name string) (Class, bool) {
	for _, c := range t.Classes {
		if c.Name == name {
			return c, true
		}
	}
	return Class{}, false
}

// Classify runs Algorithm 1's clustering step over every tenant: features
// (in parallel), pattern, then k-means classes within each pattern.
func Classify(inputs []Input, cfg Config) Table {
	results := make([]TenantResult, len(inputs))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []float64
			for i := range work {
				results[i] = TenantResult{Tenant: inputs[i].Tenant}
				s := inputs[i].Window(buf)
				buf = s.Values[:0]
				f, err := Extract(s, cfg)
				if err != nil {
					results[i].Reason = err.Error()
					continue
				}
				results[i].Features, results[i].Pattern = f, f.Pattern(cfg)
			}
		}()
	}
	for i := range inputs {
		work <- i
	}
	close(work)
	wg.Wait()

	table := Table{}
	for _, pat := range Patterns {
		var members []int
		for i, r := range results {
			if r.Pattern == pat {
				members = append(members, i)
			}
		}
		table.Classes = append(table.Classes, clusterPattern(pat, members, inputs, results, cfg)...)
	}
	table.Tenants = results
	sort.Slice(table.Tenants, func(i, j int) bool { return table.Tenants[i].Tenant < table.Tenants[j].Tenant })
	return table
}

// point is the clustering vector of a tenant, all in percentage points.
func point(f Features) []float64 {
	return []float64{f.Mean, f.Peak, f.DailyAmp * math.Cos(f.DailyPhase), f.DailyAmp * math.Sin(f.DailyPhase)}
}

// clusterPattern picks the smallest k whose classes are tight (mean distance
// to centre <= ClassSpread) and names the classes by rising average.
func clusterPattern(pat Pattern, members []int, inputs []Input, results []TenantResult, cfg Config) []Class {
	if len(members) == 0 {
		return nil
	}
	points := make([][]float64, len(members))
	for i, m := range members {
		points[i] = point(results[m].Features)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(len(pat))))
	var assign []int
	var centres [][]float64
	for k := 1; k <= min(cfg.MaxClasses, len(points)); k++ {
		assign, centres = kmeans(points, k, rng, 3)
		if meanDistance(points, assign, centres) <= cfg.ClassSpread {
			break
		}
	}
	classes := make([]Class, len(centres))
	weights := make([]float64, len(centres))
	for i, m := range members {
		c, in := &classes[assign[i]], inputs[m]
		f := results[m].Features
		w := float64(max(1, len(in.Nodes)))
		c.Average += w * f.Mean
		c.Peak += w * f.Peak
		c.Current += w * f.Current
		weights[assign[i]] += w
		c.Tenants = append(c.Tenants, in.Tenant)
		c.Nodes = append(c.Nodes, in.Nodes...)
	}
	var out []Class
	for j := range classes {
		if weights[j] == 0 {
			continue // k-means left it empty
		}
		c := classes[j]
		c.Pattern = pat
		c.Average, c.Peak, c.Current = c.Average/weights[j], c.Peak/weights[j], c.Current/weights[j]
		sort.Strings(c.Tenants)
		sort.Strings(c.Nodes)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Average != out[j].Average {
			return out[i].Average < out[j].Average
		}
		return out[i].Tenants[0] < out[j].Tenants[0]
	})
	byTenant := map[string]int{}
	for i, m := range members {
		byTenant[inputs[m].Tenant] = i
	}
	for j := range out {
		out[j].Name = fmt.Sprintf("%s-%d", pat, j+1)
		for _, t := range out[j].Tenants {
			results[members[byTenant[t]]].Class = out[j].Name
		}
	}
	return out
}
