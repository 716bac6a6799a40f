package synth

import (
	"math"
	"reflect"
	"sort"
	"testing"
	"time"
)

func TestGenerateIsReproducible(t *testing.T) {
	p := DefaultProfile(42, 40)
	p.Days = 3
	a, b := Generate(p), Generate(p)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different datacenters")
	}
	p.Seed = 43
	if reflect.DeepEqual(a.Tenants[0].Series, Generate(p).Tenants[0].Series) {
		t.Fatal("a different seed gave the same series")
	}
}

func TestGenerateHasThePapersProportions(t *testing.T) {
	p := DefaultProfile(7, 1500)
	p.Days = 2 // the series are not what this test is about
	p.ReimageDays = 365
	dc := Generate(p)
	tenants := map[Pattern]int{}
	servers := map[Pattern]int{}
	total := 0
	var perServerMonthly []float64
	perNode := map[string]int{}
	massEvents := 0
	for _, tn := range dc.Tenants {
		tenants[tn.Pattern]++
		servers[tn.Pattern] += len(tn.Nodes)
		total += len(tn.Nodes)
		for _, r := range tn.Reimages {
			perNode[r.Node]++
		}
		// a mass reimage: at least 3 servers of the tenant within an hour
		for i := 0; i+2 < len(tn.Reimages); i++ {
			if tn.Reimages[i+2].Time.Sub(tn.Reimages[i].Time) < time.Hour {
				massEvents++
				break
			}
		}
		for _, n := range tn.Nodes {
			perServerMonthly = append(perServerMonthly, float64(perNode[n])/(365.0/30))
		}
	}
	if share := float64(servers[Periodic]) / float64(total); share < 0.3 || share > 0.5 {
		t.Errorf("periodic tenants run %.0f%% of servers, want ~40%%", 100*share)
	}
	if share := float64(tenants[Periodic]) / float64(len(dc.Tenants)); share > 0.25 {
		t.Errorf("periodic tenants are %.0f%% of tenants, want a small minority", 100*share)
	}
	if tenants[Constant] <= tenants[Periodic] || tenants[Constant] <= tenants[Unpredictable] {
		t.Errorf("constant is not the most common pattern: %v", tenants)
	}
	sort.Float64s(perServerMonthly)
	atMostOnce := sort.SearchFloat64s(perServerMonthly, 1.0000001)
	if share := float64(atMostOnce) / float64(len(perServerMonthly)); share < 0.85 || share > 0.97 {
		t.Errorf("%.1f%% of servers are reimaged at most once a month, want ~90%%", 100*share)
	}
	if top := perServerMonthly[len(perServerMonthly)-1]; top < 3 {
		t.Errorf("no heavy tail: the busiest server is reimaged %.1f times a month", top)
	}
	if massEvents < len(dc.Tenants)/20 {
		t.Errorf("only %d tenants saw a correlated (mass) reimage", massEvents)
	}
}

func TestSeriesStayInRangeAndPatternsDiffer(t *testing.T) {
	p := DefaultProfile(3, 60)
	p.Days = 7
	sd := map[Pattern][]float64{}
	for _, tn := range Generate(p).Tenants {
		var sum, sq float64
		for _, v := range tn.Series.Values {
			if v < 0 || v > 100 || math.IsNaN(v) {
				t.Fatalf("%s: value %v out of range", tn.ID, v)
			}
			sum += v
			sq += v * v
		}
		n := float64(len(tn.Series.Values))
		sd[tn.Pattern] = append(sd[tn.Pattern], math.Sqrt(sq/n-(sum/n)*(sum/n)))
	}
	if mean(sd[Constant]) >= mean(sd[Periodic]) || mean(sd[Constant]) >= mean(sd[Unpredictable]) {
		t.Fatalf("constant tenants vary as much as others: %v", sd)
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
