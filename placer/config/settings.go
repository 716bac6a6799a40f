package config

import (
	"fmt"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/internal/setting"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// Settings are a Config decoded and checked once (Config.Decode): the
// typed values the placer runs with. After the agent's New nothing parses
// the config's strings again, and every error is the load's.
type Settings struct {
	Interval        time.Duration // classify.interval
	Retention       time.Duration // classify.retention
	ReadConcurrency int           // classify.read_concurrency
	SurvivalSample  int           // classify.survival_sample
	MemoryLimit     int64         // bytes, 0: none
	JobTypes        jobtype.Thresholds
	Classifier      classify.Config
	Weights         selectclass.Weights    // Algorithm 1's, proxy.weights over the defaults
	HistoryImport   *HistoryImportSettings // nil: no history_import
	ACL             ACLSettings
	Packing         PackingSettings
	Greylist        GreylistSettings
	Escalation      EscalationSettings
}

// DefaultSurvivalSample is classify.survival_sample's default.
const DefaultSurvivalSample = 100

// Decode checks every setting and returns them typed. It reads
// plugin_config and the ACL's tokens_file.
func (c Config) Decode() (Settings, error) {
	var s Settings
	var err error
	if s.Interval, err = setting.PositiveDuration("classify.interval", c.Classify.Interval, 24*time.Hour); err != nil {
		return s, err
	}
	if s.Retention, err = c.retention(); err != nil {
		return s, err
	}
	if s.ReadConcurrency, err = c.readConcurrency(); err != nil {
		return s, err
	}
	if s.SurvivalSample, err = c.survivalSample(); err != nil {
		return s, err
	}
	if s.MemoryLimit, err = c.memoryLimit(); err != nil {
		return s, err
	}
	if s.JobTypes, err = c.thresholds(); err != nil {
		return s, err
	}
	switch c.Proxy.ClassPlacement {
	case "", "constraint", "affinity", "none":
	default:
		return s, fmt.Errorf("proxy: class_placement %q: want \"constraint\", \"affinity\" or \"none\"", c.Proxy.ClassPlacement)
	}
	switch c.Proxy.RoomPlacement {
	case "", "constraint", "device", "auto", "none":
	default:
		return s, fmt.Errorf("proxy: room_placement %q: want \"constraint\", \"device\", \"auto\" or \"none\"", c.Proxy.RoomPlacement)
	}
	if err := declare.ValidateWeights("proxy.weights", c.Proxy.Weights); err != nil {
		return s, err
	}
	s.Weights = c.weights()
	if s.Packing, err = c.Packing.settings(); err != nil {
		return s, err
	}
	if _, err := c.Partition.Rule(10); err != nil { // its sizes follow the cluster: decoded per pass
		return s, err
	}
	if s.Greylist, err = c.Greylist.settings(); err != nil {
		return s, err
	}
	if s.Escalation, err = c.Escalation.settings(); err != nil {
		return s, err
	}
	if err := c.validateConnections(); err != nil {
		return s, err
	}
	if s.ACL, err = c.ACL.Decode(); err != nil {
		return s, err
	}
	if s.HistoryImport, err = c.historyImport(); err != nil {
		return s, err
	}
	s.Classifier, err = c.classifier()
	return s, err
}

// validateConnections checks the Nomad, Consul and TLS settings and the
// proxy's listener.
func (c Config) validateConnections() error {
	if err := c.Nomad.Validate("nomad"); err != nil {
		return err
	}
	if err := c.Consul.Validate("consul"); err != nil {
		return err
	}
	if err := c.TLS.Validate("tls"); err != nil {
		return err
	}
	if err := c.Proxy.ListenerTLS().Validate("proxy"); err != nil {
		return err
	}
	if c.Proxy.MaxBodyMB < 1 || c.Proxy.MaxBodyMB > 1024 {
		return fmt.Errorf("proxy.max_body_mb %d: want 1-1024", c.Proxy.MaxBodyMB)
	}
	return nil
}

func (c Config) retention() (time.Duration, error) {
	d, err := time.ParseDuration(c.Classify.Retention)
	if err != nil || d < 35*24*time.Hour {
		return 0, fmt.Errorf("classify.retention %q: want a duration of at least 35 days (840h)", c.Classify.Retention)
	}
	return d, nil
}

// memoryLimit is memory_limit in bytes (0: none).
func (c Config) memoryLimit() (int64, error) {
	if c.MemoryLimit == "" {
		return 0, nil
	}
	n, err := humanize.ParseBytes(c.MemoryLimit)
	if err != nil || n < 64<<20 || n > 1<<50 {
		return 0, fmt.Errorf("memory_limit %q: want a size of at least 64MiB such as \"900MiB\"", c.MemoryLimit)
	}
	return int64(n), nil
}

// readConcurrency is classify.read_concurrency (default 4).
func (c Config) readConcurrency() (int, error) {
	if c.Classify.ReadConcurrency == nil {
		return 4, nil
	}
	if n := *c.Classify.ReadConcurrency; n >= 1 && n <= 64 {
		return n, nil
	}
	return 0, fmt.Errorf("classify.read_concurrency %d: want 1-64", *c.Classify.ReadConcurrency)
}

// survivalSample is classify.survival_sample (default 100, 0: every member).
func (c Config) survivalSample() (int, error) {
	if c.Classify.SurvivalSample == nil {
		return DefaultSurvivalSample, nil
	}
	if n := *c.Classify.SurvivalSample; n >= 0 && n <= 1_000_000 {
		return n, nil
	}
	return 0, fmt.Errorf("classify.survival_sample %d: want 0 (every member) to 1000000", *c.Classify.SurvivalSample)
}

func (c Config) thresholds() (jobtype.Thresholds, error) {
	short, err1 := time.ParseDuration(c.Proxy.ShortThreshold)
	long, err2 := time.ParseDuration(c.Proxy.LongThreshold)
	if err1 != nil || err2 != nil || short <= 0 || long < short {
		return jobtype.Thresholds{}, fmt.Errorf("proxy: short_threshold %q and long_threshold %q must be durations, short <= long",
			c.Proxy.ShortThreshold, c.Proxy.LongThreshold)
	}
	return jobtype.Thresholds{Short: short, Long: long}, nil
}

// weights are the configured Algorithm 1 weights over the defaults.
func (c Config) weights() selectclass.Weights {
	w := selectclass.DefaultWeights()
	for typ, byPattern := range c.Proxy.Weights {
		if w[typ] == nil {
			w[typ] = map[string]float64{}
		}
		for pat, v := range byPattern {
			w[typ][pat] = v
		}
	}
	return w
}

// classifier turns the classify block into classify.Config.
func (c Config) classifier() (classify.Config, error) {
	out := classify.Default()
	for _, d := range []struct {
		name string
		val  string
		dst  *time.Duration
	}{{"window", c.Classify.Window, &out.Window}, {"min_history", c.Classify.MinHistory, &out.MinHistory}} {
		v, err := setting.PositiveDuration("classify."+d.name, d.val, *d.dst)
		if err != nil {
			return out, err
		}
		*d.dst = v
	}
	t := ClassifyThresholds{PeriodicStrength: c.Classify.PeriodicStrength, ConstantSD: c.Classify.ConstantSD,
		ClassSpread: c.Classify.ClassSpread, MaxClasses: c.Classify.MaxClasses}
	if err := t.Apply(&out, "classify."); err != nil {
		return out, err
	}
	if p := c.Classify.Seed; p != nil {
		out.Seed = uint64(*p)
	}
	return out, nil
}
