package config

import (
	"github.com/hashicorp/hcl/v2/hclsimple"

	"github.com/harvest-platform/harvest/internal/connect"
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
	// ACL says who may call the API (authconfig.go; placer/agent enforces it).
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
	// schedule (historyimport.go; placer/agent pulls); nil: off.
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
	// RoomPlacement is whether each harvested group is constrained to
	// nodes whose harvest driver publishes room for it: "constraint"
	// (default), "device" (each harvest task asks for its cores as
	// instances of the harvest-room device, which Nomad counts against the
	// room, and the group keeps the memory rule), "auto" (the device when
	// every node the harvest driver runs on offers it, checked once a minute,
	// else the constraint) or "none" (Nomad places by its own count of
	// allocations and the driver refuses what does not fit).
	RoomPlacement string `hcl:"room_placement,optional"`
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

// ListenerTLS is the proxy's listener TLS.
func (p ProxyConfig) ListenerTLS() connect.ListenerTLS {
	return connect.ListenerTLS{CertFile: p.TLSCertFile, KeyFile: p.TLSKeyFile, ClientCAFile: p.TLSClientCAFile}
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

// Default is what the placer runs with when nothing is said.
func Default() Config {
	return Config{
		LogLevel: "INFO",
		HTTPAddr: "127.0.0.1:4650",
		Consul:   ConsulConfig{Prefix: connect.DefaultPrefix}, // addresses: the environment, else Nomad's and Consul's defaults
		Classify: ClassifyConfig{Interval: "24h", Retention: "1008h"},
		Proxy:    ProxyConfig{Address: "127.0.0.1:4656", ShortThreshold: "173s", LongThreshold: "433s", MaxBodyMB: 16},
		ACL:      DefaultACL(),
	}
}

// Load reads an HCL file over the defaults. It checks the file's syntax and
// its names; the settings' values are checked once, by Decode, when the
// agent starts with the flags laid over the file (so a flag can mend what
// the file says, and nothing is decoded twice).
func Load(path string) (Config, error) {
	cfg := Default()
	var file fileConfig
	if err := hclsimple.DecodeFile(path, nil, &file); err != nil {
		return cfg, err
	}
	src := Config{LogLevel: file.LogLevel, HTTPAddr: file.HTTPAddr, MemoryLimit: file.MemoryLimit,
		PluginConfig: file.PluginConfig, HistoryImport: file.HistoryImport}
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
	if file.ACL != nil {
		src.ACL = *file.ACL
	}
	if file.Packing != nil {
		src.Packing = *file.Packing
	}
	if file.Partition != nil {
		src.Partition = *file.Partition
	}
	if file.Greylist != nil {
		src.Greylist = *file.Greylist
	}
	if file.Escalation != nil {
		src.Escalation = *file.Escalation
	}
	return cfg.Merge(src), nil
}

// Merge returns c with what src says laid over it: a setting src leaves
// empty (or nil) keeps c's. A placement strategy block src has (any setting
// given) is taken whole: its settings default when decoded, not from c's.
func (c Config) Merge(src Config) Config {
	dst := &c
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
	dst.Classify = dst.Classify.merge(src.Classify)
	dst.Proxy = dst.Proxy.merge(src.Proxy)
	dst.ACL = dst.ACL.merge(src.ACL)
	if src.Packing != (PackingConfig{}) {
		dst.Packing = src.Packing
	}
	if src.Partition != (PartitionConfig{}) {
		dst.Partition = src.Partition
	}
	if src.Greylist != (GreylistConfig{}) {
		dst.Greylist = src.Greylist
	}
	if src.Escalation != (EscalationConfig{}) {
		dst.Escalation = src.Escalation
	}
	set(&dst.PluginConfig, src.PluginConfig)
	if src.HistoryImport != nil {
		dst.HistoryImport = src.HistoryImport
	}
	return c
}

func (p ProxyConfig) merge(src ProxyConfig) ProxyConfig {
	for _, f := range []struct{ d, s *string }{{&p.Address, &src.Address}, {&p.TLSCertFile, &src.TLSCertFile},
		{&p.TLSKeyFile, &src.TLSKeyFile}, {&p.TLSClientCAFile, &src.TLSClientCAFile}, {&p.ShortThreshold, &src.ShortThreshold},
		{&p.LongThreshold, &src.LongThreshold}, {&p.ClassPlacement, &src.ClassPlacement}, {&p.RoomPlacement, &src.RoomPlacement}} {
		if *f.s != "" {
			*f.d = *f.s
		}
	}
	if src.MaxBodyMB != 0 {
		p.MaxBodyMB = src.MaxBodyMB
	}
	if src.Namespaces != nil {
		p.Namespaces = src.Namespaces
	}
	if src.Weights != nil {
		p.Weights = src.Weights
	}
	return p
}

func (c ClassifyConfig) merge(src ClassifyConfig) ClassifyConfig {
	for _, f := range []struct{ d, s *string }{{&c.Interval, &src.Interval}, {&c.Window, &src.Window},
		{&c.MinHistory, &src.MinHistory}, {&c.Retention, &src.Retention}} {
		if *f.s != "" {
			*f.d = *f.s
		}
	}
	for _, f := range []struct{ d, s **float64 }{{&c.PeriodicStrength, &src.PeriodicStrength}, {&c.ConstantSD, &src.ConstantSD},
		{&c.ClassSpread, &src.ClassSpread}} {
		if *f.s != nil {
			*f.d = *f.s
		}
	}
	for _, f := range []struct{ d, s **int }{{&c.MaxClasses, &src.MaxClasses}, {&c.Seed, &src.Seed},
		{&c.ReadConcurrency, &src.ReadConcurrency}, {&c.SurvivalSample, &src.SurvivalSample}} {
		if *f.s != nil {
			*f.d = *f.s
		}
	}
	return c
}
