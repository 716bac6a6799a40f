package history

import "slices"

// Percentile is the p-th percentile (0 <= p < 1) of values by the
// nearest-rank rule Harvest's sources use: the value at rank
// min(n-1, floor(p*n)) of the n sorted values, NaN (gaps) left out; 0 with
// no value. The classes' peak and the blob grid's peak CPU are both this.
//
// Values on the history's 0.01-point grid within [0, 100], what the store
// keeps, are counted into buckets instead of sorted: O(n), a third of a
// tenant's classification before (BenchmarkPercentile). Any other value
// makes it sort a copy, so the answer is exact either way.
func Percentile(values []float64, p float64) float64 {
	var counts [gridPoints]uint32
	n := 0
	for _, v := range values {
		if v != v { // NaN
			continue
		}
		k := int(v*100 + 0.5)
		if k < 0 || k >= gridPoints || float64(k)/100 != v {
			return sortedPercentile(values, p)
		}
		counts[k]++
		n++
	}
	if n == 0 {
		return 0
	}
	rank := uint32(min(n-1, int(p*float64(n))))
	seen := uint32(0)
	for b, c := range counts {
		seen += c
		if seen > rank {
			return float64(b) / 100
		}
	}
	return 100
}

// gridPoints are the 0.01-point steps from 0 to 100 inclusive.
const gridPoints = 10001

// sortedPercentile is Percentile by sorting a copy without the NaNs.
func sortedPercentile(values []float64, p float64) float64 {
	s := make([]float64, 0, len(values))
	for _, v := range values {
		if v == v {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return 0
	}
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
