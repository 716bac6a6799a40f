package classify

import "math"

// JobType is a batch job's length class (Algorithm 1, line 3).
type JobType string

const (
	Short  JobType = "short"
	Medium JobType = "medium"
	Long   JobType = "long"
)

// Headroom is the share of a class's capacity free for a job of type t
// (Section 4.1): a short job needs only what is free now, 1 - current; a
// medium one what stays free on average, 1 - max(average, current); a long
// one what stays free at the peak, 1 - max(peak, current). current is the
// class's utilisation now, in percent (live node stats or latest samples).
func Headroom(t JobType, c Class, current float64) float64 {
	var used float64
	switch t {
	case Short:
		used = current
	case Medium:
		used = math.Max(c.Average, current)
	default:
		used = math.Max(c.Peak, current)
	}
	return math.Max(0, 1-used/100)
}
