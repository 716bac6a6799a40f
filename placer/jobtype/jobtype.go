// Package jobtype types a harvested job short, medium or long from the
// duration of its last run (Algorithm 1, line 3 of
// history-based-harvesting.txt). A job never seen is medium.
package jobtype

import "time"

// The job types.
const (
	Short  = "short"
	Medium = "medium"
	Long   = "long"
)

// Thresholds split durations into types; the defaults are the paper's
// testbed values, 173 s and 433 s.
type Thresholds struct {
	Short time.Duration // below: short
	Long  time.Duration // above: long
}

// Default returns the paper's thresholds.
func Default() Thresholds { return Thresholds{Short: 173 * time.Second, Long: 433 * time.Second} }

// Of types a job from its last run's duration (known false: never ran).
func (t Thresholds) Of(last time.Duration, known bool) string {
	switch {
	case !known:
		return Medium
	case last < t.Short:
		return Short
	case last > t.Long:
		return Long
	}
	return Medium
}
