package agent

import (
	"os"
	"path/filepath"
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

func TestLoadConfigOverDefaults(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, `
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
	cc := set.classifier
	if iv := set.interval; iv != 6*time.Hour || cc.Window != 240*time.Hour || cc.ConstantSD != 2.5 || cc.PeriodicStrength != 0.3 {
		t.Fatalf("classify %+v", cc)
	}
	if _, err := LoadConfig(writeConfig(t, ``)); err != nil {
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
		_, err := LoadConfig(writeConfig(t, src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", src, err, want)
		}
	}
}

func TestMemoryLimitAndReadConcurrencyAreChecked(t *testing.T) {
	c := DefaultConfig()
	c.MemoryLimit = "900MiB"
	if n, err := c.memoryLimit(); err != nil || n != 900<<20 {
		t.Fatalf("900MiB read as %d, %v", n, err)
	}
	c.MemoryLimit = "12 potatoes"
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "memory_limit") {
		t.Fatalf("a bad memory_limit passed validation: %v", err)
	}
	c.MemoryLimit = ""
	bad := 0
	c.Classify.ReadConcurrency = &bad
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "read_concurrency") {
		t.Fatalf("read_concurrency 0 passed validation: %v", err)
	}
	c.Classify.ReadConcurrency = nil
	if n, err := c.survivalSample(); err != nil || n != defaultSurvivalSample {
		t.Fatalf("survival_sample unset read as %d, %v", n, err)
	}
	negative := -1
	c.Classify.SurvivalSample = &negative
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "survival_sample") {
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
	cfg, err := LoadConfig(writeConfig(t, `memory_limit = "900MiB"`))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := cfg.memoryLimit(); err != nil || n != 900<<20 {
		t.Fatalf("memory_limit = %q, %d bytes (%v); want 900MiB", cfg.MemoryLimit, n, err)
	}
}
