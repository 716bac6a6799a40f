package history

import "slices"

// Percentile is the p-th percentile (0 <= p < 1) of values by the
// nearest-rank rule Harvest's sources use: the value at rank
// min(n-1, floor(p*n)) of the n sorted values, NaN (gaps) left out; 0 with
// no value. The classes' peak and the blob grid's peak CPU are both this.
//
// It counts the values into the 0.01-point buckets of the history's
// resolution over [0, 100] (below and above clamped to the ends), finds the
// bucket holding that rank, and sorts only that bucket's values: exact for
// any input, O(n) (BenchmarkPercentile against sorting the whole series).
func Percentile(values []float64, p float64) float64 {
	var counts [gridPoints]uint32
	n := 0
	for _, v := range values {
		if v == v { // not NaN
			counts[bucket(v)]++
			n++
		}
	}
	if n == 0 {
		return 0
	}
	rank := min(n-1, int(p*float64(n)))
	below := 0
	for b, c := range counts {
		if below+int(c) <= rank {
			below += int(c)
			continue
		}
		// bucket is monotone in v: the rank-th value is this bucket's
		// (rank-below)-th, a handful of values to sort
		in := make([]float64, 0, c)
		for _, v := range values {
			if v == v && bucket(v) == b {
				in = append(in, v)
			}
		}
		slices.Sort(in)
		return in[rank-below]
	}
	return 0 // unreachable: the counts sum to n
}

// gridPoints are the 0.01-point steps from 0 to 100 inclusive.
const gridPoints = 10001

// bucket is v's 0.01-point step, rounded half up, clamped to [0, 100]
// (so it never decreases as v grows, infinities included).
func bucket(v float64) int {
	switch {
	case v < 0:
		return 0
	case v >= 100:
		return gridPoints - 1
	}
	return int(v*100 + 0.5)
}
