package synth

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/history"
)

const month = 30 * 24 * time.Hour

// reimages draws a tenant's reimage rate (per server per month) and its
// events. Rates are log-normal: the median tenant reimages a server about
// once in five months, and a heavy tail reimages several times a month
// (Figures 4 and 5). The rate holds for the whole history, so months
// correlate. A third of events come as mass reimages: a share of the
// tenant's servers all within an hour (a redeploy or repurposing).
func reimages(rng *rand.Rand, nodes []string, start time.Time, days int) (float64, []history.Reimage) {
	rate := math.Exp(math.Log(0.2) + 1.3*rng.NormFloat64())
	rate = math.Min(rate, 20)
	span := time.Duration(days) * 24 * time.Hour
	months := span.Hours() / month.Hours()
	var out []history.Reimage
	at := func() time.Time { return start.Add(time.Duration(rng.Float64() * float64(span))) }
	// independent reimages: two thirds of the rate
	for _, n := range nodes {
		k := poisson(rng, rate*months*2/3)
		for j := 0; j < k; j++ {
			out = append(out, history.Reimage{Node: n, Time: at().Truncate(time.Second)})
		}
	}
	// mass reimages: the other third, in events that each take 30-100% of the servers
	if len(nodes) > 1 {
		share := 0.3 + 0.7*rng.Float64()
		perEvent := math.Max(1, share*float64(len(nodes)))
		events := poisson(rng, rate*months/3*float64(len(nodes))/perEvent)
		for e := 0; e < events; e++ {
			t0 := at()
			for _, idx := range rng.Perm(len(nodes))[:int(perEvent)] {
				t := t0.Add(time.Duration(rng.Float64() * float64(time.Hour)))
				out = append(out, history.Reimage{Node: nodes[idx], Time: t.Truncate(time.Second)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return rate, out
}

// poisson draws from a Poisson distribution (Knuth; means here are small,
// larger ones use the normal approximation).
func poisson(rng *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 50 {
		return max(0, int(math.Round(mean+math.Sqrt(mean)*rng.NormFloat64())))
	}
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
