package manager

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// Config is the plugin part of a component's HCL config:
//
//	plugin_dir = "/opt/harvest/plugins"
//
//	usage_source "node" {
//	  driver = "harvest-usage-prometheus"   # a built-in's name, or a binary in plugin_dir
//	  args   = []                           # optional, passed to the binary
//	  config = { url = "http://127.0.0.1:9100/metrics" }
//	  call_timeout        = "2s"            # optional: bound on each call (default 10s)
//	  restart_backoff     = "1s"            # optional: first restart delay (default 1s)
//	  restart_backoff_max = "1m"            # optional: longest restart delay (default 1m)
//	}
//
//	history_importer "prom" {
//	  driver = "harvest-import-prometheus"
//	  config = { address = "http://127.0.0.1:9090" }
//	}
//
// (HCL wants one argument per line: a one-line block may hold only one.)
//
// A component can decode it from a whole file (ParseConfig), from its own
// body, keeping the rest (DecodeConfig), or put PluginConfig block fields in
// its own gohcl struct.
type Config struct {
	PluginDir        string          `hcl:"plugin_dir,optional"`
	UsageSources     []*PluginConfig `hcl:"usage_source,block"`
	HistoryImporters []*PluginConfig `hcl:"history_importer,block"`
	// Remain is whatever else the body holds, for the embedding component.
	Remain hcl.Body `hcl:",remain"`
}

// PluginConfig is one usage_source or history_importer block.
type PluginConfig struct {
	Name              string            `hcl:"name,label"`
	Driver            string            `hcl:"driver"`
	Args              []string          `hcl:"args,optional"`
	Config            map[string]string `hcl:"config,optional"`
	CallTimeout       string            `hcl:"call_timeout,optional"`
	RestartBackoff    string            `hcl:"restart_backoff,optional"`
	RestartBackoffMax string            `hcl:"restart_backoff_max,optional"`
}

// Supervision is a block's timing, parsed, with the defaults filled in.
type Supervision struct {
	CallTimeout       time.Duration
	RestartBackoff    time.Duration
	RestartBackoffMax time.Duration
}

// Defaults for a block that leaves them out.
const (
	DefaultCallTimeout       = 10 * time.Second
	DefaultRestartBackoff    = time.Second
	DefaultRestartBackoffMax = time.Minute
)

// ParseConfig decodes a file holding only plugin settings, and validates it.
func ParseConfig(src []byte, filename string) (*Config, error) {
	f, diags := hclparse.NewParser().ParseHCL(src, filename)
	if diags.HasErrors() {
		return nil, diags
	}
	// Nothing else may be in the file: check it against the whole schema.
	schema, _ := gohcl.ImpliedBodySchema(&Config{})
	if _, diags := f.Body.Content(schema); diags.HasErrors() {
		return nil, diags
	}
	cfg, diags := DecodeConfig(f.Body)
	if diags.HasErrors() {
		return nil, diags
	}
	return cfg, nil
}

// DecodeConfig decodes the plugin settings out of a component's body (the
// rest stays in Config.Remain) and validates them.
func DecodeConfig(body hcl.Body) (*Config, hcl.Diagnostics) {
	var cfg Config
	if diags := gohcl.DecodeBody(body, nil, &cfg); diags.HasErrors() {
		return nil, diags
	}
	if err := cfg.Validate(); err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "invalid plugin config", Detail: err.Error()}}
	}
	return &cfg, nil
}

// namePattern is what a block name may be: it labels metrics and logs.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// Validate checks every block: names unique across all plugin blocks,
// a driver that is a plain file name (never a path out of plugin_dir), and
// timings that parse.
func (c *Config) Validate() error {
	var errs []error
	seen := map[string]string{}
	check := func(kind string, blocks []*PluginConfig) {
		for _, p := range blocks {
			where := fmt.Sprintf("%s %q", kind, p.Name)
			if !namePattern.MatchString(p.Name) {
				errs = append(errs, fmt.Errorf("%s: the name must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", where))
			}
			if other, dup := seen[p.Name]; dup {
				errs = append(errs, fmt.Errorf("%s: the name is already used by a %s block", where, other))
			}
			seen[p.Name] = kind
			if p.Driver == "" || p.Driver == "." || p.Driver == ".." || strings.ContainsAny(p.Driver, `/\`+"\x00") {
				errs = append(errs, fmt.Errorf("%s: driver %q must name a built-in or a file in plugin_dir", where, p.Driver))
			}
			if _, err := p.Supervision(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			}
		}
	}
	check("usage_source", c.UsageSources)
	check("history_importer", c.HistoryImporters)
	return errors.Join(errs...)
}

// Supervision parses the block's timings.
func (p *PluginConfig) Supervision() (Supervision, error) {
	s := Supervision{DefaultCallTimeout, DefaultRestartBackoff, DefaultRestartBackoffMax}
	for _, f := range []struct {
		name, v string
		to      *time.Duration
	}{{"call_timeout", p.CallTimeout, &s.CallTimeout}, {"restart_backoff", p.RestartBackoff, &s.RestartBackoff}, {"restart_backoff_max", p.RestartBackoffMax, &s.RestartBackoffMax}} {
		if f.v == "" {
			continue
		}
		d, err := time.ParseDuration(f.v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("%s %q: want a positive duration such as 5s", f.name, f.v)
		}
		*f.to = d
	}
	if s.RestartBackoff > s.RestartBackoffMax {
		return s, fmt.Errorf("restart_backoff %s is above restart_backoff_max %s", s.RestartBackoff, s.RestartBackoffMax)
	}
	return s, nil
}
