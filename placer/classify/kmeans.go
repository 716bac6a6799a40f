package classify

import (
	"math"
	"math/rand/v2"
)

// kmeans clusters points into k groups: k-means++ seeding from rng, then
// Lloyd iterations, best of restarts by inertia. Written here rather than
// imported because the Go k-means libraries seed from the global generator,
// and classes must be reproducible for a seed.
func kmeans(points [][]float64, k int, rng *rand.Rand, restarts int) (assign []int, centres [][]float64) {
	bestInertia := math.Inf(1)
	for r := 0; r < restarts; r++ {
		a, c, inertia := lloyd(points, seedCentres(points, k, rng))
		if inertia < bestInertia {
			bestInertia, assign, centres = inertia, a, c
		}
	}
	return assign, centres
}

func seedCentres(points [][]float64, k int, rng *rand.Rand) [][]float64 {
	centres := [][]float64{points[rng.IntN(len(points))]}
	d2 := make([]float64, len(points))
	for len(centres) < k {
		sum := 0.0
		for i, p := range points {
			d2[i] = math.Inf(1)
			for _, c := range centres {
				d2[i] = math.Min(d2[i], dist2(p, c))
			}
			sum += d2[i]
		}
		if sum == 0 { // fewer distinct points than k
			centres = append(centres, points[rng.IntN(len(points))])
			continue
		}
		u := rng.Float64() * sum
		i := 0
		for ; i < len(points)-1 && u > d2[i]; i++ {
			u -= d2[i]
		}
		centres = append(centres, points[i])
	}
	out := make([][]float64, k)
	for i, c := range centres {
		out[i] = append([]float64(nil), c...)
	}
	return out
}

func lloyd(points [][]float64, centres [][]float64) ([]int, [][]float64, float64) {
	assign := make([]int, len(points))
	dim := len(points[0])
	var inertia float64
	for iter := 0; iter < 100; iter++ {
		changed := iter == 0
		inertia = 0
		for i, p := range points {
			best, bestD := 0, math.Inf(1)
			for j, c := range centres {
				if d := dist2(p, c); d < bestD {
					best, bestD = j, d
				}
			}
			if assign[i] != best {
				assign[i], changed = best, true
			}
			inertia += bestD
		}
		if !changed {
			break
		}
		sums := make([][]float64, len(centres))
		counts := make([]int, len(centres))
		for j := range sums {
			sums[j] = make([]float64, dim)
		}
		for i, p := range points {
			counts[assign[i]]++
			for d, v := range p {
				sums[assign[i]][d] += v
			}
		}
		for j := range centres {
			if counts[j] == 0 {
				continue // an empty cluster keeps its centre
			}
			for d := range centres[j] {
				centres[j][d] = sums[j][d] / float64(counts[j])
			}
		}
	}
	return assign, centres, inertia
}

func dist2(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// meanDistance is the mean Euclidean distance of points to their centre.
func meanDistance(points [][]float64, assign []int, centres [][]float64) float64 {
	s := 0.0
	for i, p := range points {
		s += math.Sqrt(dist2(p, centres[assign[i]]))
	}
	return s / float64(len(points))
}
