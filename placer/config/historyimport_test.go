package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeFile writes src to name in a new directory and returns its path.
func writeFile(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pluginsFile writes a plugin config with a csv-long block "csv", a
// csv-reimages block "other" and a usage source (placer/agent's tests
// import through the same blocks with a real CSV).
func pluginsFile(t *testing.T) string {
	t.Helper()
	return writeFile(t, "plugins.hcl", `
history_importer "csv" {
  driver = "csv-long"
  config = { path = "/nonexistent/long.csv" }
}
history_importer "other" {
  driver = "csv-reimages"
  config = { path = "/nonexistent" }
}
usage_source "node" {
  driver = "not-started-by-the-placer"
}
`)
}

func TestHistoryImportConfig(t *testing.T) {
	plugins := pluginsFile(t)
	cfg, err := load(writeConfig(t, fmt.Sprintf(`
plugin_config = %q
history_import {
  importer = "csv"
  tenants  = ["search/frontend"]
}
`, plugins)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.historyImport()
	if err != nil {
		t.Fatal(err)
	}
	if s.Importer != "csv" || s.Interval != time.Hour || s.Lookback != 2*time.Hour || len(s.Tenants) != 1 ||
		len(s.Plugins.HistoryImporters) != 1 || s.Plugins.HistoryImporters[0].Name != "csv" || len(s.Plugins.UsageSources) != 0 {
		t.Fatalf("settings %+v, plugins %+v", s, s.Plugins)
	}
	if cfg, err := load(writeConfig(t, ``)); err != nil || cfg.HistoryImport != nil {
		t.Fatalf("history_import must be off by default: %+v, %v", cfg.HistoryImport, err)
	}

	badPlugins := writeFile(t, "bad.hcl", "history_importer \"x\" {\n  driver = \"csv-long\"\n  confg  = {}\n}\n")
	block := func(body string) string {
		return fmt.Sprintf("plugin_config = %q\nhistory_import {\n%s\n}\n", plugins, body)
	}
	cases := map[string]string{
		`history_import { importer = "csv" }`:                   `history_import: plugin_config is required: the file holding plugin_dir and the history_importer "csv" block`,
		block(``):                                               `Missing required argument; The argument "importer" is required`,
		block(`importer = "prom"`):                              `history_import: importer "prom": plugin_config "` + plugins + `" has no history_importer "prom" block (it has csv, other)`,
		block("importer = \"csv\"\ninterval = \"hourly\""):      `history_import.interval "hourly": want a positive duration`,
		block("importer = \"csv\"\nlookback = \"1m\""):          `history_import.lookback "1m": want a duration of at least 2m0s`,
		block("importer = \"csv\"\nlookback = \"30m\""):         `history_import.lookback 30m0s is shorter than interval 1h0m0s: pulls would leave gaps`,
		block("importer = \"csv\"\ntenants = [\"nofunction\"]"): `history_import.tenants: tenant "nofunction": want environment/function`,
		block("importer = \"csv\"\nimporter_name = \"x\""):      `Unsupported argument; An argument named "importer_name"`,
		`plugin_config = "/nonexistent/plugins.hcl"`:            `plugin_config: open /nonexistent/plugins.hcl: no such file or directory`,
		fmt.Sprintf(`plugin_config = %q`, badPlugins):           `plugin_config "` + badPlugins + `": ` + badPlugins + `:3,3-8: Unsupported argument; An argument named "confg"`,
	}
	for src, want := range cases {
		_, err := load(writeConfig(t, src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n err = %v\nwant %q", src, err, want)
		}
	}
}
