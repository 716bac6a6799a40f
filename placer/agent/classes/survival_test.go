package classes

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/survival"
)

// driverNode is a node of tenant whose harvest driver reports its size.
func driverNode(name, tenant, cores, reserve, margin string) labels.Node {
	attrs := map[string]string{contract.AttrCapacityCores: cores, contract.AttrReserveCores: reserve}
	if margin != "" {
		attrs[contract.AttrAdmitMarginCores] = margin
	}
	return labels.Node{ID: name, Name: name, Meta: map[string]string{labels.TenantKey: tenant}, Attributes: attrs}
}

// series is days of 2-minute slots at level percent, plus rise percent in
// the last slot of every hour.
func hourly(level, rise float64, days int) history.Series {
	v := make([]float64, days*history.SlotsPerDay)
	for i := range v {
		v[i] = level
		if i%30 == 29 {
			v[i] += rise
		}
	}
	return history.Series{Start: now.Add(-time.Duration(days) * 24 * time.Hour), Values: v}
}

// prob reads a wire probability, NaN when unknown.
func prob(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func point(t *testing.T, c api.Class, l time.Duration) api.SurvivalPoint {
	t.Helper()
	for _, p := range c.Survival {
		if p.Length == l {
			return p
		}
	}
	t.Fatalf("%s: no survival at %s in %+v", c.Name, l, c.Survival)
	return api.SurvivalPoint{}
}

// A class whose primary stays flat kills nothing: every length survives.
// One whose primary takes two more cores for one slot every hour kills the
// youngest tasks at each rise, so a task that must outlive several rises
// survives less than one that ends before the next.
func TestClassSurvivalFlatVersusHourlyRise(t *testing.T) {
	classes := []classify.Class{{Name: "constant-1", Tenants: []string{"a/calm"}}, {Name: "periodic-1", Tenants: []string{"b/hourly"}}}
	inputs := []classify.Input{
		{Tenant: "a/calm", Nodes: []string{"a1", "a2"}, Series: hourly(30, 0, 10)},
		{Tenant: "b/hourly", Nodes: []string{"b1"}, Series: hourly(30, 12.5, 10)}, // +2 of 16 cores
	}
	nodes := []labels.Node{driverNode("a1", "a/calm", "16", "4", "1"), driverNode("b1", "b/hourly", "16", "4", "1")}
	out := Survival(classes, inputs, 30*24*time.Hour, nodes, jobtype.Default(), 0)
	calm, rough := out[0], out[1]
	if len(calm.Survival) != len(survival.DefaultLengths()) || calm.SurvivalUnavailable != "" {
		t.Fatalf("calm class: %+v", calm)
	}
	for _, p := range calm.Survival {
		if p.Tasks == 0 || prob(p.Probability) != 1 {
			t.Errorf("calm class at %s: %+v, want every task to end", p.Length, p)
		}
	}
	short, long := point(t, rough, 10*time.Minute), point(t, rough, 4*time.Hour)
	if sp, lp := prob(short.Probability), prob(long.Probability); !(sp > 0.9) || !(lp < sp-0.2) {
		t.Errorf("hourly rise: 10m survives %.3f, 4h %.3f; want 10m above 0.9 and 4h well below it", sp, lp)
	}
	jt := rough.SurvivalByJobType
	if jt[jobtype.Short].Length != 173*time.Second || jt[jobtype.Medium].Length != 433*time.Second || jt[jobtype.Long].Length != 866*time.Second {
		t.Errorf("job type lengths %+v, want the thresholds 173s, 433s and twice 433s", jt)
	}
	if lp, sp := prob(jt[jobtype.Long].Probability), prob(jt[jobtype.Short].Probability); !(lp < sp) {
		t.Errorf("hourly rise: long jobs' tasks survive %.3f, short %.3f; want long lower", lp, sp)
	}
	if s := rough.SurvivalServer; s == nil || *s != (api.SurvivalServer{Cores: 16, Reserve: 4, Margin: 1, Nodes: 1}) {
		t.Errorf("server %+v, want 16 cores with the 4-core reserve and the 1-core margin", s)
	}
}

// The server is the class's median node by size (cores, then reserve,
// then margin), nodes that report no (or a broken) size are left out, and a
// class with none gets no figures and the reason.
func TestClassSurvivalServerIsTheMedianNode(t *testing.T) {
	classes := []classify.Class{{Name: "constant-1", Tenants: []string{"a/x", "a/y"}}, {Name: "constant-2", Tenants: []string{"b/z"}}}
	inputs := []classify.Input{
		{Tenant: "a/x", Nodes: []string{"x1"}, Series: hourly(10, 0, 2)},
		{Tenant: "a/y", Nodes: []string{"y1"}, Series: hourly(10, 0, 2)},
		{Tenant: "b/z", Nodes: []string{"z1"}, Series: hourly(10, 0, 2)},
	}
	nodes := []labels.Node{
		driverNode("x1", "a/x", "32", "8", "2"),
		driverNode("x2", "a/x", "8", "2", ""),
		driverNode("y1", "a/y", "16", "5.28", ""), // an old driver: no margin published
		driverNode("y2", "a/y", "many", "1", "1"),
		{ID: "y3", Name: "y3", Meta: map[string]string{labels.TenantKey: "a/y"}}, // no harvest driver
		{ID: "z1", Name: "z1", Meta: map[string]string{labels.TenantKey: "b/z"}},
	}
	out := Survival(classes, inputs, 30*24*time.Hour, nodes, jobtype.Default(), 0)
	if s := out[0].SurvivalServer; s == nil || *s != (api.SurvivalServer{Cores: 16, Reserve: 5.28, Nodes: 3}) {
		t.Errorf("server %+v, want the 16-core node of the three that report", s)
	}
	if out[1].Survival != nil || out[1].SurvivalByJobType != nil || out[1].SurvivalUnavailable != noDriverSize {
		t.Errorf("class without a driver size: %+v", out[1])
	}
}

func TestSurvivalAtInterpolatesOnALogScale(t *testing.T) {
	nan := survival.Probability(math.NaN())
	curve := []survival.Point{{Length: 2 * time.Minute, Probability: 1}, {Length: 8 * time.Minute, Probability: 0.5},
		{Length: time.Hour, Probability: nan}}
	for l, want := range map[time.Duration]float64{
		time.Minute: 1, 2 * time.Minute: 1, 4 * time.Minute: 0.75, 8 * time.Minute: 0.5, 16 * time.Minute: math.NaN(),
		2 * time.Hour: math.NaN(),
	} {
		got := float64(survivalAt(curve, l))
		if math.Abs(got-want) > 1e-9 || math.IsNaN(got) != math.IsNaN(want) {
			t.Errorf("at %s: %.3f, want %.3f", l, got, want)
		}
	}
}

// GET /v1/classes after a refresh carries each class's survival figures,
// at the job typing thresholds in effect.
// syntheticClasses is a synthetic datacenter of about n tenants' 30 days
// (the classifier's default window), a 16-core driver node per tenant
// server, the classifier's own classes and the largest class's size.
func syntheticClasses(n int) ([]classify.Input, []labels.Node, classify.Table, int) {
	p := synth.DefaultProfile(7, n)
	p.Days = 30
	dc := synth.Generate(p)
	var inputs []classify.Input
	var nodes []labels.Node
	for _, t := range dc.Tenants {
		inputs = append(inputs, classify.Input{Tenant: t.ID.String(), Nodes: t.Nodes, Series: t.Series})
		for _, node := range t.Nodes {
			nodes = append(nodes, driverNode(node, t.ID.String(), "16", "5.28", "1"))
		}
	}
	table := classify.Classify(inputs, classify.Default())
	largest := 0
	for _, c := range table.Classes {
		largest = max(largest, len(c.Tenants))
	}
	return inputs, nodes, table, largest
}

// survivalGaps compares two sets of figures of the same classes point by
// point: the largest and summed |difference| and how many points both
// have; each is also handed to note (may be nil).
func survivalGaps(a, b []api.Class, note func(c api.Class, pa, pb api.SurvivalPoint, d float64)) (worst, sum float64, count int) {
	for i, c := range a {
		for k, pt := range c.Survival {
			other := b[i].Survival[k]
			if pt.Probability == nil || other.Probability == nil {
				continue
			}
			d := math.Abs(*pt.Probability - *other.Probability)
			if note != nil {
				note(c, pt, other, d)
			}
			worst, sum, count = max(worst, d), sum+d, count+1
		}
	}
	return worst, sum, count
}

// BenchmarkClassSurvival replays a 1,000-tenant synthetic datacenter's 30
// days (the classifier's default window) as a refresh does, with the
// classifier's own classes and a 16-core node per tenant server; beside it,
// the classification the same refresh runs, for scale.
func BenchmarkClassSurvival(b *testing.B) {
	inputs, nodes, table, largest := syntheticClasses(1000)
	cfg := classify.Default()
	b.Run("classify", func(b *testing.B) {
		for range b.N {
			classify.Classify(inputs, cfg)
		}
	})
	b.Run("survival", func(b *testing.B) {
		for range b.N {
			Survival(table.Classes, inputs, cfg.Window, nodes, jobtype.Default(), 0)
		}
		b.ReportMetric(float64(len(table.Classes)), "classes")
		b.ReportMetric(float64(largest), "largest-class-tenants")
	})
}

// TestSurvivalSampleStaysNearTheFullReplay replays a 2,000-tenant synthetic
// datacenter's classes in full and with samples of their members: the
// sampled figures stay near the full ones, a sample at least a class's size
// changes nothing, and the sample is the same whatever the members' order.
func TestSurvivalSampleStaysNearTheFullReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 2,000 tenants")
	}
	inputs, nodes, table, largest := syntheticClasses(2000)
	cfg := classify.Default()
	full := Survival(table.Classes, inputs, cfg.Window, nodes, jobtype.Default(), 0)
	if same := Survival(table.Classes, inputs, cfg.Window, nodes, jobtype.Default(), largest); !reflect.DeepEqual(same, full) {
		t.Fatal("a sample as large as the largest class changed the figures")
	}
	for _, n := range []int{25, 50, config.DefaultSurvivalSample} {
		sampled := Survival(table.Classes, inputs, cfg.Window, nodes, jobtype.Default(), n)
		worst, sum, count := survivalGaps(full, sampled, func(c api.Class, a, b api.SurvivalPoint, d float64) {
			if d > 0.05 && n == config.DefaultSurvivalSample {
				t.Logf("  %s %s: full %.3f (%d tasks), sampled %.3f (%d tasks)", c.Name, a.Length, *a.Probability, a.Tasks, *b.Probability, b.Tasks)
			}
		})
		t.Logf("sample %d of up to %d members: |sampled - full| mean %.4f, max %.4f over %d class lengths",
			n, largest, sum/float64(count), worst, count)
		// the bounds are what priority sampling gave here (mean 0.003, max
		// 0.086, in a class whose kills come from a few tenants) with room
		// for noise: a sampler that loses the weight of heavy members or
		// draws unevenly is several times worse on both
		if mean := sum / float64(count); n == config.DefaultSurvivalSample && (mean > 0.01 || worst > 0.12) {
			t.Errorf("the default sample (%d) is %.4f from the full replay on average, %.3f at most; want within 0.01 and 0.12",
				n, mean, worst)
		}
	}
	reversed := slices.Clone(inputs)
	slices.Reverse(reversed)
	a, b := sampleMembers(inputs, 50), sampleMembers(reversed, 50)
	names := func(in []sampled) []string {
		var s []string
		for _, x := range in {
			s = append(s, x.Tenant)
		}
		slices.Sort(s)
		return s
	}
	if len(a) != 50 || !slices.Equal(names(a), names(b)) {
		t.Errorf("the sample depends on the members' order")
	}
}

// TestPrioritySampleKeepsHeavyMembersAndEstimatesTheWeight: the member
// holding the most nodes is always in the sample, and the sample's
// estimator weights add up to about the whole class's weight (priority
// sampling estimates subset sums without bias).
func TestPrioritySampleKeepsHeavyMembersAndEstimatesTheWeight(t *testing.T) {
	var members []classify.Input
	total := 0
	for i := range 1000 {
		nodes := 1 + i%3
		if i == 500 {
			nodes = 400 // a tenant of 400 servers among small ones
		}
		total += nodes
		members = append(members, classify.Input{Tenant: fmt.Sprintf("env/t%04d", i), Nodes: make([]string, nodes)})
	}
	s := sampleMembers(members, 100)
	sum, heavy := 0.0, false
	for _, m := range s {
		sum += m.weight
		heavy = heavy || m.Tenant == "env/t0500"
		if m.weight < float64(len(m.Nodes)) {
			t.Fatalf("%s weighs %.1f, less than its %d nodes", m.Tenant, m.weight, len(m.Nodes))
		}
	}
	if len(s) != 100 || !heavy || math.Abs(sum-float64(total)) > 0.15*float64(total) {
		t.Errorf("%d kept, the 400-server tenant kept: %v, weights sum to %.0f of %d", len(s), heavy, sum, total)
	}
	if all := sampleMembers(members[:50], 100); len(all) != 50 || all[0].weight != 1 {
		t.Errorf("a class under the sample size: %d kept, first weighs %v; want all at their own weight", len(all), all[0].weight)
	}
}
