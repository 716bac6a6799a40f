// Package agent runs the harvest placer as a daemon: it classifies primary
// tenants on a schedule and on demand, keeps the class table in Consul KV,
// labels Nomad nodes with their class, and serves its HTTP API and metrics.
// It wires the pure packages (classify, labels) to Nomad and Consul. It also
// keeps the tenant declarations and the policy document in Consul KV
// (declarations.go, policydoc.go) and applies them (declsync.go), and can
// pull tenant history through a history-importer plugin (historyimport.go).
package agent

import (
	"fmt"
	"github.com/dustin/go-humanize"
	"time"

	"github.com/hashicorp/hcl/v2/hclsimple"

	"github.com/harvest-platform/harvest/internal/connect"
	"github.com/harvest-platform/harvest/internal/setting"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// Config is the placer's configuration file (HCL), Nomad-style:
//
//	log_level = "INFO"
//	http_addr = "127.0.0.1:4650"
//	nomad    { address = "http://127.0.0.1:4646" }
//	consul   { address = "127.0.0.1:8500"  prefix = "harvest/" }
//	classify { interval = "24h"  window = "720h" }
//
//	plugin_config = "/etc/harvest/plugins.hcl"  # plugin_dir, history_importer blocks
//	history_import {
//	  importer = "prom"   # a history_importer block of plugin_config
//	  interval = "1h"     # how often to pull (default 1h)
//	  lookback = "2h"     # each pull imports [now - lookback, now) (default 2 x interval)
//	  tenants  = []       # default: every tenant the importer knows
//	}
type Config struct {
	LogLevel string `hcl:"log_level,optional"`
	HTTPAddr string `hcl:"http_addr,optional"`
	// MemoryLimit is the Go runtime's soft memory limit (e.g. "900MiB"):
	// the collector works harder near it instead of letting the heap grow
	// to twice the history kept in memory. Empty: none (or GOMEMLIMIT).
	MemoryLimit string `hcl:"memory_limit,optional"`
	// TLS of the API's listener (http_addr).
	TLS      connect.ListenerTLS `hcl:"tls,block"`
	Nomad    NomadConfig         `hcl:"nomad,block"`
	Consul   ConsulConfig        `hcl:"consul,block"`
	Classify ClassifyConfig      `hcl:"classify,block"`
	Proxy    ProxyConfig         `hcl:"proxy,block"`
	// ACL says who may call the API (authconfig.go, auth.go).
	ACL ACLConfig `hcl:"acl,block"`
	// Placement strategies of issue 8 (strategyconfig.go); each off unless enabled.
	Packing    PackingConfig    `hcl:"packing,block"`
	Partition  PartitionConfig  `hcl:"partition,block"`
	Greylist   GreylistConfig   `hcl:"greylist,block"`
	Escalation EscalationConfig `hcl:"escalation,block"`
	// PluginConfig is the plugin manager's file (plugin_dir and
	// history_importer blocks, as `harvestctl history import -plugin-config`
	// reads), for HistoryImport; without it, it is checked but nothing runs.
	PluginConfig string `hcl:"plugin_config,optional"`
	// HistoryImport pulls tenant history through a history importer on a
	// schedule (historyimport.go); nil: off.
	HistoryImport *HistoryImportConfig `hcl:"history_import,block"`
}

// HistoryImportConfig is the history_import block.
type HistoryImportConfig struct {
	// Importer is the name of a history_importer block in plugin_config.
	Importer string `hcl:"importer"`
	// Interval is how often to pull (default 1h; the first pull is at start).
	Interval string `hcl:"interval,optional"`
	// Lookback is how far back each pull reaches (default twice the
	// interval, at least the interval: pulls overlap, never leave a gap).
	Lookback string `hcl:"lookback,optional"`
	// Tenants to import ("environment/function"); empty: every tenant the
	// importer knows.
	Tenants []string `hcl:"tenants,optional"`
}

// ProxyConfig is the admission proxy users point NOMAD_ADDR at.
type ProxyConfig struct {
	// Address to listen on ("" turns the proxy off).
	Address string `hcl:"address,optional"`
	// TLS of the proxy's listener; with tls_client_ca_file it wants client
	// certificates signed by that CA, as Nomad's verify_https_client.
	TLSCertFile     string `hcl:"tls_cert_file,optional"`
	TLSKeyFile      string `hcl:"tls_key_file,optional"`
	TLSClientCAFile string `hcl:"tls_client_ca_file,optional"`
	// MaxBodyMB bounds a job register, plan or validate body (default 16).
	MaxBodyMB int `hcl:"max_body_mb,optional"`
	// Namespaces whose every job is harvested, with or without meta.
	Namespaces []string `hcl:"namespaces,optional"`
	// Job typing thresholds (defaults 173s and 433s).
	ShortThreshold string `hcl:"short_threshold,optional"`
	LongThreshold  string `hcl:"long_threshold,optional"`
	// ClassPlacement is how a job is tied to Algorithm 1's classes:
	// "constraint" (default), "affinity" (a preference) or "none" (no
	// class rule: the paper's primary-tenant-aware baseline, PT).
	ClassPlacement string `hcl:"class_placement,optional"`
	// Weights[type][pattern] for Algorithm 1 (defaults as the paper ranks).
	Weights map[string]map[string]float64 `hcl:"weights,optional"`
}

// fileConfig is the file's shape: every block optional.
type fileConfig struct {
	LogLevel    string               `hcl:"log_level,optional"`
	HTTPAddr    string               `hcl:"http_addr,optional"`
	MemoryLimit string               `hcl:"memory_limit,optional"`
	TLS         *connect.ListenerTLS `hcl:"tls,block"`
	Nomad       *NomadConfig         `hcl:"nomad,block"`
	Consul      *ConsulConfig        `hcl:"consul,block"`
	Classify    *ClassifyConfig      `hcl:"classify,block"`
	Proxy       *ProxyConfig         `hcl:"proxy,block"`
	ACL         *ACLConfig           `hcl:"acl,block"`

	Packing    *PackingConfig    `hcl:"packing,block"`
	Partition  *PartitionConfig  `hcl:"partition,block"`
	Greylist   *GreylistConfig   `hcl:"greylist,block"`
	Escalation *EscalationConfig `hcl:"escalation,block"`

	PluginConfig  string               `hcl:"plugin_config,optional"`
	HistoryImport *HistoryImportConfig `hcl:"history_import,block"`
}

// NomadConfig says where Nomad's API is, with which token and TLS files
// (connect.Nomad: the environment's NOMAD_* first, the block over it).
type NomadConfig = connect.Nomad

// ConsulConfig says where Consul's API is, with which token and TLS files,
// and under which KV prefix Harvest's state lives (connect.Consul).
type ConsulConfig = connect.Consul

// ClassifyConfig holds the schedule and the classifier's thresholds.
type ClassifyConfig struct {
	Interval         string   `hcl:"interval,optional"`
	Window           string   `hcl:"window,optional"`
	MinHistory       string   `hcl:"min_history,optional"`
	PeriodicStrength *float64 `hcl:"periodic_strength,optional"`
	ConstantSD       *float64 `hcl:"constant_sd,optional"`
	ClassSpread      *float64 `hcl:"class_spread,optional"`
	MaxClasses       *int     `hcl:"max_classes,optional"`
	Seed             *int     `hcl:"seed,optional"`
	// Retention is how much tenant history the placer keeps (default 42
	// days: the classification window plus a margin; at least 35 days).
	Retention string `hcl:"retention,optional"`
	// ReadConcurrency is how many days of history a refresh reads from
	// Consul at once (default 4, 1-64): a cold start reads every day once.
	ReadConcurrency *int `hcl:"read_concurrency,optional"`
	// SurvivalSample is how many members of each class the survival replay
	// replays at most (default 100; 0: every member).
	SurvivalSample *int `hcl:"survival_sample,optional"`
}

// DefaultConfig is what the placer runs with when nothing is said.
func DefaultConfig() Config {
	return Config{
		LogLevel: "INFO",
		HTTPAddr: "127.0.0.1:4650",
		Consul:   ConsulConfig{Prefix: connect.DefaultPrefix}, // addresses: the environment, else Nomad's and Consul's defaults
		Classify: ClassifyConfig{Interval: "24h", Retention: "1008h"},
		Proxy:    ProxyConfig{Address: "127.0.0.1:4656", ShortThreshold: "173s", LongThreshold: "433s", MaxBodyMB: 16},
		ACL:      defaultACL(),
	}
}

// LoadConfig reads an HCL file over the defaults.
func LoadConfig(path string) (Config, error) {
	cfg := DefaultConfig()
	var file fileConfig
	if err := hclsimple.DecodeFile(path, nil, &file); err != nil {
		return cfg, err
	}
	src := Config{LogLevel: file.LogLevel, HTTPAddr: file.HTTPAddr, MemoryLimit: file.MemoryLimit}
	if file.Nomad != nil {
		src.Nomad = *file.Nomad
	}
	if file.TLS != nil {
		src.TLS = *file.TLS
	}
	if file.Consul != nil {
		src.Consul = *file.Consul
	}
	if file.Classify != nil {
		src.Classify = *file.Classify
	}
	if file.Proxy != nil {
		src.Proxy = *file.Proxy
	}
	merge(&cfg, src)
	if file.ACL != nil {
		mergeACL(&cfg.ACL, *file.ACL)
	}
	// policy blocks are taken whole: their settings default when read
	if file.Packing != nil {
		cfg.Packing = *file.Packing
	}
	if file.Partition != nil {
		cfg.Partition = *file.Partition
	}
	if file.Greylist != nil {
		cfg.Greylist = *file.Greylist
	}
	if file.Escalation != nil {
		cfg.Escalation = *file.Escalation
	}
	cfg.PluginConfig, cfg.HistoryImport = file.PluginConfig, file.HistoryImport
	return cfg, cfg.validate()
}

func merge(dst *Config, src Config) {
	set := func(d *string, s string) {
		if s != "" {
			*d = s
		}
	}
	set(&dst.LogLevel, src.LogLevel)
	set(&dst.MemoryLimit, src.MemoryLimit)
	set(&dst.HTTPAddr, src.HTTPAddr)
	dst.Nomad = dst.Nomad.Over(src.Nomad)
	dst.Consul = dst.Consul.Over(src.Consul)
	dst.TLS = dst.TLS.Over(src.TLS)
	set(&dst.Proxy.TLSClientCAFile, src.Proxy.TLSClientCAFile)
	if src.Proxy.MaxBodyMB != 0 {
		dst.Proxy.MaxBodyMB = src.Proxy.MaxBodyMB
	}
	set(&dst.Classify.Interval, src.Classify.Interval)
	set(&dst.Classify.Window, src.Classify.Window)
	set(&dst.Classify.MinHistory, src.Classify.MinHistory)
	set(&dst.Classify.Retention, src.Classify.Retention)
	set(&dst.Proxy.Address, src.Proxy.Address)
	set(&dst.Proxy.TLSCertFile, src.Proxy.TLSCertFile)
	set(&dst.Proxy.TLSKeyFile, src.Proxy.TLSKeyFile)
	set(&dst.Proxy.ShortThreshold, src.Proxy.ShortThreshold)
	set(&dst.Proxy.LongThreshold, src.Proxy.LongThreshold)
	set(&dst.Proxy.ClassPlacement, src.Proxy.ClassPlacement)
	if src.Proxy.Namespaces != nil {
		dst.Proxy.Namespaces = src.Proxy.Namespaces
	}
	if src.Proxy.Weights != nil {
		dst.Proxy.Weights = src.Proxy.Weights
	}
	c := &dst.Classify
	if src.Classify.PeriodicStrength != nil {
		c.PeriodicStrength = src.Classify.PeriodicStrength
	}
	if src.Classify.ConstantSD != nil {
		c.ConstantSD = src.Classify.ConstantSD
	}
	if src.Classify.ClassSpread != nil {
		c.ClassSpread = src.Classify.ClassSpread
	}
	if src.Classify.MaxClasses != nil {
		c.MaxClasses = src.Classify.MaxClasses
	}
	if src.Classify.Seed != nil {
		c.Seed = src.Classify.Seed
	}
	if src.Classify.ReadConcurrency != nil {
		c.ReadConcurrency = src.Classify.ReadConcurrency
	}
	if src.Classify.SurvivalSample != nil {
		c.SurvivalSample = src.Classify.SurvivalSample
	}
}

// validate checks the config as New will decode it.
func (c Config) validate() error {
	_, err := c.decode()
	return err
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
	if err := c.Proxy.listenerTLS().Validate("proxy"); err != nil {
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
		return defaultSurvivalSample, nil
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
	t := classifyThresholds{PeriodicStrength: c.Classify.PeriodicStrength, ConstantSD: c.Classify.ConstantSD,
		ClassSpread: c.Classify.ClassSpread, MaxClasses: c.Classify.MaxClasses}
	if err := t.apply(&out, "classify."); err != nil {
		return out, err
	}
	if p := c.Classify.Seed; p != nil {
		out.Seed = uint64(*p)
	}
	return out, nil
}

// listenerTLS is the proxy's listener TLS.
func (p ProxyConfig) listenerTLS() connect.ListenerTLS {
	return connect.ListenerTLS{CertFile: p.TLSCertFile, KeyFile: p.TLSKeyFile, ClientCAFile: p.TLSClientCAFile}
}
