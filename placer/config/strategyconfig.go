package config

import (
	"fmt"
	"time"

	"github.com/harvest-platform/harvest/internal/setting"
	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/placer/partition"
)

// The placement strategy blocks of the placer's configuration (issue 8). Each is off
// unless enabled; a setting left out takes its source's default:
//
//	packing {
//	  enabled        = true
//	  interval       = "10s"
//	  high_threshold = 0.6
//	  min_nodes      = 5
//	  release_after  = "10m"
//	}
//	partition {
//	  enabled        = true
//	  initial_cutoff = "90s"
//	  initial_size   = 1 # sizes default to a share of the harvested nodes
//	  min_size       = 1
//	  max_size       = 3
//	  window         = 5
//	  threshold      = 0.1
//	  grow           = 2
//	  shrink         = 2
//	}
//	greylist {
//	  enabled   = true
//	  interval  = "10s"
//	  threshold = 3
//	  reset     = "4h"
//	}
//	escalation {
//	  enabled       = true
//	  interval      = "5s"
//	  delay         = "30s"
//	  extra_classes = 1
//	}

// PackingConfig is container packing (placer/packing).
type PackingConfig struct {
	Enabled       bool     `hcl:"enabled,optional"`
	Interval      string   `hcl:"interval,optional"`
	HighThreshold *float64 `hcl:"high_threshold,optional"`
	MinNodes      *int     `hcl:"min_nodes,optional"`
	// ReleaseAfter is how long a node must have been empty to be listed
	// as releasable (harvestctl packing).
	ReleaseAfter string `hcl:"release_after,optional"`
}

// PartitionConfig is the short-job partition with a moving cutoff
// (placer/partition). Sizes left out scale with the number of harvested
// nodes (partition.Default).
type PartitionConfig struct {
	Enabled       bool     `hcl:"enabled,optional"`
	InitialCutoff string   `hcl:"initial_cutoff,optional"`
	InitialSize   *int     `hcl:"initial_size,optional"`
	MinSize       *int     `hcl:"min_size,optional"`
	MaxSize       *int     `hcl:"max_size,optional"`
	Window        *int     `hcl:"window,optional"`
	Threshold     *float64 `hcl:"threshold,optional"`
	Grow          *int     `hcl:"grow,optional"`
	Shrink        *int     `hcl:"shrink,optional"`
}

// GreylistConfig is node reliability tracking (placer/greylist).
type GreylistConfig struct {
	Enabled   bool   `hcl:"enabled,optional"`
	Interval  string `hcl:"interval,optional"`
	Threshold *int   `hcl:"threshold,optional"`
	Reset     string `hcl:"reset,optional"`
}

// EscalationConfig is placement escalation (placer/escalation).
type EscalationConfig struct {
	Enabled      bool   `hcl:"enabled,optional"`
	Interval     string `hcl:"interval,optional"`
	Delay        string `hcl:"delay,optional"`
	ExtraClasses *int   `hcl:"extra_classes,optional"`
}

// PackingSettings are the packing block decoded.
type PackingSettings struct {
	Rule                   packing.Config
	Interval, ReleaseAfter time.Duration
}

// GreylistSettings are the greylist block decoded.
type GreylistSettings struct {
	Threshold       int
	Reset, Interval time.Duration
}

// EscalationSettings are the escalation block decoded.
type EscalationSettings struct {
	Delay, Interval time.Duration
	ExtraClasses    int
}

func (p PackingConfig) settings() (s PackingSettings, err error) {
	s.Rule = packing.Default()
	if p.HighThreshold != nil {
		if *p.HighThreshold <= 0 || *p.HighThreshold > 1 {
			return s, fmt.Errorf("packing.high_threshold %g: want a share in (0, 1]", *p.HighThreshold)
		}
		s.Rule.HighThreshold = *p.HighThreshold
	}
	if p.MinNodes != nil {
		s.Rule.MinNodes = *p.MinNodes
	}
	if s.Interval, err = setting.PositiveDuration("packing.interval", p.Interval, 10*time.Second); err != nil {
		return
	}
	s.ReleaseAfter, err = setting.PositiveDuration("packing.release_after", p.ReleaseAfter, 10*time.Minute)
	return
}

// Rule returns the partition's rule for a cluster of nodes harvested
// nodes (decoded per pass: its sizes follow the cluster).
func (p PartitionConfig) Rule(nodes int) (partition.Config, error) {
	cfg := partition.Default(nodes)
	var err error
	if cfg.InitialCutoff, err = setting.PositiveDuration("partition.initial_cutoff", p.InitialCutoff, cfg.InitialCutoff); err != nil {
		return cfg, err
	}
	for _, s := range []struct {
		name string
		v    *int
		dst  *int
		min  int
	}{{"initial_size", p.InitialSize, &cfg.InitialSize, 0}, {"min_size", p.MinSize, &cfg.MinPartition, 0},
		{"max_size", p.MaxSize, &cfg.MaxPartition, 0}, {"window", p.Window, &cfg.Window, 1},
		{"grow", p.Grow, &cfg.Grow, 0}, {"shrink", p.Shrink, &cfg.Shrink, 0}} {
		if s.v == nil {
			continue
		}
		if *s.v < s.min {
			return cfg, fmt.Errorf("partition.%s %d: want at least %d", s.name, *s.v, s.min)
		}
		*s.dst = *s.v
	}
	if p.Threshold != nil {
		if *p.Threshold < 0 {
			return cfg, fmt.Errorf("partition.threshold %g: want a share >= 0", *p.Threshold)
		}
		cfg.Threshold = *p.Threshold
	}
	if cfg.MinPartition > cfg.MaxPartition {
		return cfg, fmt.Errorf("partition: min_size %d above max_size %d", cfg.MinPartition, cfg.MaxPartition)
	}
	return cfg, nil
}

func (g GreylistConfig) settings() (s GreylistSettings, err error) {
	s.Threshold = 3
	if g.Threshold != nil {
		if *g.Threshold < 1 {
			return s, fmt.Errorf("greylist.threshold %d: want at least 1", *g.Threshold)
		}
		s.Threshold = *g.Threshold
	}
	if s.Reset, err = setting.PositiveDuration("greylist.reset", g.Reset, 4*time.Hour); err != nil {
		return
	}
	s.Interval, err = setting.PositiveDuration("greylist.interval", g.Interval, 10*time.Second)
	return
}

func (e EscalationConfig) settings() (s EscalationSettings, err error) {
	s.ExtraClasses = 1
	if e.ExtraClasses != nil {
		if *e.ExtraClasses < 1 {
			return s, fmt.Errorf("escalation.extra_classes %d: want at least 1", *e.ExtraClasses)
		}
		s.ExtraClasses = *e.ExtraClasses
	}
	if s.Delay, err = setting.PositiveDuration("escalation.delay", e.Delay, 30*time.Second); err != nil {
		return
	}
	s.Interval, err = setting.PositiveDuration("escalation.interval", e.Interval, 5*time.Second)
	return
}
