package manager

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/plugins/usagesource"
)

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
plugin_dir = "/opt/harvest/plugins"
usage_source "node" {
  driver = "harvest-usage-prometheus"
  args   = ["-v"]
  config = { url = "http://127.0.0.1:9100/metrics", cores = 8 }
  call_timeout = "2s"
  restart_backoff = "500ms"
  restart_backoff_max = "30s"
}
usage_source "proc" { driver = "proc" }
history_importer "prom" {
  driver = "harvest-import-prometheus"
  config = { address = "http://127.0.0.1:9090" }
}
`), "plugins.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PluginDir != "/opt/harvest/plugins" || len(cfg.UsageSources) != 2 || len(cfg.HistoryImporters) != 1 {
		t.Fatalf("%+v", cfg)
	}
	u := cfg.UsageSources[0]
	if u.Name != "node" || u.Driver != "harvest-usage-prometheus" || u.Args[0] != "-v" ||
		u.Config["url"] != "http://127.0.0.1:9100/metrics" || u.Config["cores"] != "8" {
		t.Fatalf("%+v", u)
	}
	s, _ := u.Supervision()
	if s != (Supervision{2 * time.Second, 500 * time.Millisecond, 30 * time.Second}) {
		t.Fatalf("%+v", s)
	}
	if s, _ := cfg.UsageSources[1].Supervision(); s != (Supervision{DefaultCallTimeout, DefaultRestartBackoff, DefaultRestartBackoffMax}) {
		t.Fatalf("defaults: %+v", s)
	}
}

func TestParseConfigRejects(t *testing.T) {
	for src, want := range map[string]string{
		`usage_source "a" { driver = "x" }` + "\n" + `history_importer "a" { driver = "y" }`: "already used",
		`usage_source "a" { driver = "../bin/x" }`:                                           "must name a built-in",
		`usage_source "a" { driver = "" }`:                                                   "must name a built-in",
		`usage_source "a b" { driver = "x" }`:                                                "the name must be",
		`usage_source "a" {
driver = "x"
call_timeout = "soon"
}`: "positive duration",
		`usage_source "a" {
driver = "x"
call_timeout = "-1s"
}`: "positive duration",
		`usage_source "a" {
driver = "x"
restart_backoff = "2m"
}`: "above restart_backoff_max",
		`usage_source "a" {
driver = "x"
colour = "red"
}`: "Unsupported argument",
		`usage_source "a" { }`:          "driver",
		`plugin_dri = "/x"`:             "Unsupported argument",
		`strategy "a" { driver = "x" }`: "Unsupported block",
	} {
		if _, err := ParseConfig([]byte(src), "bad.hcl"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error saying %q", src, err, want)
		}
	}
}

func TestNewRejectsUnknownDriver(t *testing.T) {
	cfg, err := ParseConfig([]byte(`plugin_dir = "`+pluginDir+`"`+"\n"+`usage_source "a" { driver = "nosuch" }`), "x.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, Builtins{}, Options{}); err == nil || !strings.Contains(err.Error(), "not a built-in, nor an executable") {
		t.Fatalf("got %v", err)
	}
	cfg.PluginDir = ""
	if _, err := New(cfg, Builtins{}, Options{}); err == nil || !strings.Contains(err.Error(), "plugin_dir is not set") {
		t.Fatalf("got %v", err)
	}
	cfg.UsageSources[0].Driver = "proc"
	broken := Builtins{UsageSources: map[string]func(hclog.Logger) (usagesource.Source, error){
		"proc": func(hclog.Logger) (usagesource.Source, error) { return nil, errors.New("no /proc here") }}}
	if _, err := New(cfg, broken, Options{}); err == nil || !strings.Contains(err.Error(), "no /proc here") {
		t.Fatalf("a failing built-in: got %v", err)
	}
}

// FuzzParseConfig: any input either fails or gives a config whose every
// block has a safe driver name and positive, ordered timings; it never
// panics.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`plugin_dir = "/p"` + "\n" + `usage_source "a" {
driver = "x"
config = { k = "v" }
}`))
	f.Add([]byte("history_importer \"b\" {\ndriver = \"y\"\nrestart_backoff = \"1s\"\nrestart_backoff_max = \"2s\"\n}"))
	f.Add([]byte(`usage_source "a" {
driver = "x"
call_timeout = "${1}"
}`))
	f.Add([]byte("usage_source \"a\" {\n driver = <<EOF\nx\nEOF\n}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := ParseConfig(src, "fuzz.hcl")
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, p := range append(append([]*PluginConfig{}, cfg.UsageSources...), cfg.HistoryImporters...) {
			if names[p.Name] {
				t.Fatalf("duplicate name %q accepted", p.Name)
			}
			names[p.Name] = true
			if p.Driver == "" || p.Driver == ".." || strings.ContainsAny(p.Driver, `/\`) {
				t.Fatalf("driver %q accepted", p.Driver)
			}
			s, err := p.Supervision()
			if err != nil || s.CallTimeout <= 0 || s.RestartBackoff <= 0 || s.RestartBackoff > s.RestartBackoffMax {
				t.Fatalf("supervision %+v, %v accepted", s, err)
			}
		}
	})
}
