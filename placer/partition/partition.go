// Package partition keeps a short-job partition with a moving cutoff
// (hybrid-scheduling.txt, Sections 5.4-5.5): a set of nodes only short jobs
// may use; the short/long cutoff follows the mean of the last 5 job
// durations whenever that mean differs from the cutoff by more than 10%;
// each time the cutoff falls the partition grows, and each time it rises
// the partition shrinks by 2, within bounds. Pure: the placer labels the
// partition's nodes and constrains long jobs away from them.
package partition

import (
	"math"
	"time"
)

// Config holds the rule's settings.
type Config struct {
	Window        int     // durations averaged (5)
	Threshold     float64 // relative change that moves the cutoff (0.10)
	Grow, Shrink  int     // nodes added when the cutoff falls (2) / removed when it rises (2)
	MinPartition  int     // bounds on the partition's size
	MaxPartition  int
	InitialCutoff time.Duration
	InitialSize   int
}

// Default follows the source: mean of the last 5, 10%, steps of 2.
func Default(nodes int) Config {
	return Config{Window: 5, Threshold: 0.10, Grow: 2, Shrink: 2, MinPartition: 1,
		MaxPartition: max(1, nodes/2), InitialCutoff: 90 * time.Second, InitialSize: max(1, nodes/10)}
}

// State is the current cutoff and partition size.
type State struct {
	cfg    Config
	recent []time.Duration
	Cutoff time.Duration
	Size   int
}

// New starts at the configured cutoff and size.
func New(cfg Config) *State {
	return &State{cfg: cfg, Cutoff: cfg.InitialCutoff, Size: clamp(cfg.InitialSize, cfg.MinPartition, cfg.MaxPartition)}
}

// Short reports whether a job of this expected duration is short.
func (s *State) Short(d time.Duration) bool { return d <= s.Cutoff }

// Observe records a finished job's duration and moves the cutoff and the
// partition when the recent mean has moved far enough. It reports whether
// anything changed.
func (s *State) Observe(d time.Duration) bool {
	s.recent = append(s.recent, d)
	if len(s.recent) > s.cfg.Window {
		s.recent = s.recent[len(s.recent)-s.cfg.Window:]
	}
	if len(s.recent) < s.cfg.Window {
		return false
	}
	var sum time.Duration
	for _, r := range s.recent {
		sum += r
	}
	avg := sum / time.Duration(len(s.recent))
	if math.Abs(float64(avg-s.Cutoff)) <= s.cfg.Threshold*float64(s.Cutoff) {
		return false
	}
	if avg < s.Cutoff {
		s.Size = clamp(s.Size+s.cfg.Grow, s.cfg.MinPartition, s.cfg.MaxPartition)
	} else {
		s.Size = clamp(s.Size-s.cfg.Shrink, s.cfg.MinPartition, s.cfg.MaxPartition)
	}
	s.Cutoff = avg
	return true
}

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }

// Recent returns the durations the next move will average, oldest first,
// so that a caller can keep the state across restarts.
func (s *State) Recent() []time.Duration { return append([]time.Duration(nil), s.recent...) }

// Restore resumes a kept state under cfg: the cutoff, the size (clamped to
// cfg's bounds) and the recent durations (the last Window of them).
func Restore(cfg Config, cutoff time.Duration, size int, recent []time.Duration) *State {
	s := New(cfg)
	if cutoff > 0 {
		s.Cutoff = cutoff
	}
	s.Size = clamp(size, cfg.MinPartition, cfg.MaxPartition)
	if len(recent) > cfg.Window {
		recent = recent[len(recent)-cfg.Window:]
	}
	s.recent = append([]time.Duration(nil), recent...)
	return s
}
