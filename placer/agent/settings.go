package agent

import (
	"fmt"
	"time"

	"github.com/harvest-platform/harvest/internal/setting"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// settings are a Config decoded and checked once (Config.decode): the
// typed values the placer runs with. After New nothing parses the
// config's strings again, and every error is the load's.
type settings struct {
	interval        time.Duration // classify.interval
	retention       time.Duration // classify.retention
	readConcurrency int
	survivalSample  int   // classify.survival_sample
	memoryLimit     int64 // bytes, 0: none
	jobTypes        jobtype.Thresholds
	classifier      classify.Config
	weights         selectclass.Weights
	imports         *importSettings // nil: no history_import
	aclCacheTTL     time.Duration
	packing         packingSettings
	greylist        greylistSettings
	escalation      escalationSettings
}

type packingSettings struct {
	cfg                    packing.Config
	interval, releaseAfter time.Duration
}

type greylistSettings struct {
	threshold       int
	reset, interval time.Duration
}

type escalationSettings struct {
	delay, interval time.Duration
	extra           int
}

// decode checks every setting and returns them typed. It reads
// plugin_config and the ACL's tokens_file.
func (c Config) decode() (settings, error) {
	var s settings
	var err error
	if s.interval, err = setting.PositiveDuration("classify.interval", c.Classify.Interval, 24*time.Hour); err != nil {
		return s, err
	}
	if s.retention, err = c.retention(); err != nil {
		return s, err
	}
	if s.readConcurrency, err = c.readConcurrency(); err != nil {
		return s, err
	}
	if s.survivalSample, err = c.survivalSample(); err != nil {
		return s, err
	}
	if s.memoryLimit, err = c.memoryLimit(); err != nil {
		return s, err
	}
	if s.jobTypes, err = c.thresholds(); err != nil {
		return s, err
	}
	switch c.Proxy.ClassPlacement {
	case "", "constraint", "affinity", "none":
	default:
		return s, fmt.Errorf("proxy: class_placement %q: want \"constraint\", \"affinity\" or \"none\"", c.Proxy.ClassPlacement)
	}
	if err := validateWeights("proxy.weights", c.Proxy.Weights); err != nil {
		return s, err
	}
	s.weights = c.weights()
	if s.packing, err = c.Packing.settings(); err != nil {
		return s, err
	}
	if _, err := c.Partition.settings(10); err != nil { // its sizes follow the cluster: decoded per pass
		return s, err
	}
	if s.greylist, err = c.Greylist.settings(); err != nil {
		return s, err
	}
	if s.escalation, err = c.Escalation.settings(); err != nil {
		return s, err
	}
	if err := c.validateConnections(); err != nil {
		return s, err
	}
	if s.aclCacheTTL, err = c.ACL.validate(); err != nil {
		return s, err
	}
	if s.imports, err = c.historyImport(); err != nil {
		return s, err
	}
	s.classifier, err = c.classifier()
	return s, err
}
