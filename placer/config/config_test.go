package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "placer.hcl")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// load is a file as the agent takes it with no flag: loaded over the
// defaults, then decoded (the one check of the settings' values).
func load(path string) (Config, error) {
	cfg, err := Load(path)
	if err != nil {
		return cfg, err
	}
	_, err = cfg.Decode()
	return cfg, err
}

// A value the file gets wrong is checked once, after the flags: a flag
// mends it, and Load alone (syntax and names) takes it.
func TestAFlagMendsWhatTheFileGetsWrong(t *testing.T) {
	path := writeConfig(t, `classify { interval = "daily" }`)
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load checked a value: %v", err)
	}
	if _, err := cfg.Decode(); err == nil || !strings.Contains(err.Error(), `classify.interval "daily"`) {
		t.Fatalf("the file's value: err = %v", err)
	}
	mended := cfg.Merge(Config{Classify: ClassifyConfig{Interval: "1h"}})
	if s := decoded(t, mended); s.Interval != time.Hour {
		t.Errorf("interval %v, want the flag's 1h", s.Interval)
	}
	if _, err := Load(writeConfig(t, `classify { intreval = "1h" }`)); err == nil || !strings.Contains(err.Error(), `"intreval"`) {
		t.Errorf("a misspelt name: err = %v", err)
	}
}

// decoded is cfg as the agent decodes it.
func decoded(t *testing.T, cfg Config) Settings {
	t.Helper()
	s, err := cfg.Decode()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadConfigOverDefaults(t *testing.T) {
	cfg, err := load(writeConfig(t, `
http_addr = "127.0.0.1:9999"
consul {
  prefix = "other/"
}
classify {
  interval    = "6h"
  window      = "240h"
  constant_sd = 2.5
}
`))
	if err != nil {
		t.Fatal(err)
	}
	// addresses left out come from the environment, else the api packages'
	// defaults
	t.Setenv("NOMAD_ADDR", "")
	t.Setenv("CONSUL_HTTP_ADDR", "")
	nomad, _ := cfg.Nomad.URL()
	if cfg.HTTPAddr != "127.0.0.1:9999" || cfg.Consul.Prefix != "other/" || cfg.Consul.APIConfig().Address != "localhost:8500" ||
		nomad != "http://127.0.0.1:4646" {
		t.Fatalf("config %+v", cfg)
	}
	t.Setenv("NOMAD_ADDR", "https://nomad.example:4646")
	if nomad, _ := cfg.Nomad.URL(); nomad != "https://nomad.example:4646" {
		t.Fatalf("NOMAD_ADDR not taken: %s", nomad)
	}
	set := decoded(t, cfg)
	cc := set.Classifier
	if iv := set.Interval; iv != 6*time.Hour || cc.Window != 240*time.Hour || cc.ConstantSD != 2.5 || cc.PeriodicStrength != 0.3 {
		t.Fatalf("classify %+v", cc)
	}
	if _, err := load(writeConfig(t, ``)); err != nil {
		t.Fatalf("an empty file must mean the defaults: %v", err)
	}
}

func TestLoadConfigRejectsBadValuesClearly(t *testing.T) {
	cases := map[string]string{
		`proxy { class_placement = "soft" }`: `class_placement "soft"`,
		`classify { interval = "daily" }`:    `classify.interval "daily"`,
		`classify { window = "-1h" }`:        `classify.window "-1h"`,
		`classify { max_classes = 0 }`:       "max_classes must be at least 1",
		`classify { retention = "240h" }`:    "at least 35 days",
		`nomad { adress = "x" }`:             `Unsupported argument; An argument named "adress"`,
		`http_addr = `:                       "Missing expression",
	}
	for src, want := range cases {
		_, err := load(writeConfig(t, src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", src, err, want)
		}
	}
}

func TestMemoryLimitAndReadConcurrencyAreChecked(t *testing.T) {
	c := Default()
	c.MemoryLimit = "900MiB"
	if n, err := c.memoryLimit(); err != nil || n != 900<<20 {
		t.Fatalf("900MiB read as %d, %v", n, err)
	}
	c.MemoryLimit = "12 potatoes"
	if _, err := c.Decode(); err == nil || !strings.Contains(err.Error(), "memory_limit") {
		t.Fatalf("a bad memory_limit passed validation: %v", err)
	}
	c.MemoryLimit = ""
	bad := 0
	c.Classify.ReadConcurrency = &bad
	if _, err := c.Decode(); err == nil || !strings.Contains(err.Error(), "read_concurrency") {
		t.Fatalf("read_concurrency 0 passed validation: %v", err)
	}
	c.Classify.ReadConcurrency = nil
	if n, err := c.survivalSample(); err != nil || n != DefaultSurvivalSample {
		t.Fatalf("survival_sample unset read as %d, %v", n, err)
	}
	negative := -1
	c.Classify.SurvivalSample = &negative
	if _, err := c.Decode(); err == nil || !strings.Contains(err.Error(), "survival_sample") {
		t.Fatalf("survival_sample -1 passed validation: %v", err)
	}
	c.Classify.SurvivalSample = &bad
	if n, err := c.survivalSample(); err != nil || n != 0 {
		t.Fatalf("survival_sample 0 (every member) read as %d, %v", n, err)
	}
}

// memory_limit in the file reaches the config (it was parsed, then dropped
// on the way over the defaults).
func TestLoadConfigKeepsMemoryLimit(t *testing.T) {
	cfg, err := load(writeConfig(t, `memory_limit = "900MiB"`))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := cfg.memoryLimit(); err != nil || n != 900<<20 {
		t.Fatalf("memory_limit = %q, %d bytes (%v); want 900MiB", cfg.MemoryLimit, n, err)
	}
}

func TestACLConfigChecksTokens(t *testing.T) {
	cfg := DefaultACL()
	cfg.Tokens = []string{"short"}
	if _, err := cfg.Decode(); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("short token: %v", err)
	}
	cfg.Tokens = nil
	cfg.CacheTTL = "soon"
	if _, err := cfg.Decode(); err == nil {
		t.Fatal("bad cache_ttl accepted")
	}
}

// The file refuses the weights and thresholds the policy document
// (placer/agent/declarations) refuses, with the same checks.
func TestConfigFileRefusesTheSameWeightsAndThresholds(t *testing.T) {
	for src, want := range map[string]string{
		`proxy { weights = { huge = { constant = 1 } } }`:  `proxy.weights: unknown job type "huge"`,
		`proxy { weights = { long = { constant = -2 } } }`: "proxy.weights.long.constant -2",
		`classify { constant_sd = -1 }`:                    "classify.constant_sd -1",
	} {
		if _, err := load(writeConfig(t, src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", src, err, want)
		}
	}
}

// Merge lays what is given over a loaded file (as the agent command's
// flags are), keeping everything else: an empty Config changes nothing.
func TestMergeKeepsWhatIsNotGiven(t *testing.T) {
	base, err := load(writeConfig(t, "http_addr = \"127.0.0.1:9999\"\npacking { enabled = true }\nacl { anonymous_read = false }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(base.Merge(Config{}), base) {
		t.Fatalf("merging nothing changed the config")
	}
	got := base.Merge(Config{LogLevel: "DEBUG", Proxy: ProxyConfig{Address: "127.0.0.1:1"}})
	if got.LogLevel != "DEBUG" || got.Proxy.Address != "127.0.0.1:1" || got.HTTPAddr != "127.0.0.1:9999" ||
		got.Proxy.ShortThreshold != "173s" || !got.Packing.Enabled || *got.ACL.AnonymousRead || !*got.ACL.NomadTokens {
		t.Fatalf("merged %+v", got)
	}
}
