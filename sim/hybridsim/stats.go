package hybridsim

import (
	"math"
	"slices"
)

// summarise gives the median, 90th percentile (nearest rank) and mean.
func summarise(x []float64) Latency {
	if len(x) == 0 {
		return Latency{}
	}
	x = slices.Clone(x)
	slices.Sort(x)
	var sum float64
	for _, v := range x {
		sum += v
	}
	return Latency{Jobs: len(x), Median: rank(x, 0.5), P90: rank(x, 0.9), Mean: sum / float64(len(x))}
}

// rank is the nearest-rank p-quantile of sorted x.
func rank(x []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(x)))) - 1
	return x[max(0, min(len(x)-1, k))]
}
