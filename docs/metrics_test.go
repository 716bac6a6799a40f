package docs

import (
	"sort"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/driver"
	"github.com/harvest-platform/harvest/placer/agent"
	"github.com/harvest-platform/harvest/storage/front"
)

// standardPrefixes are the Go runtime's and the process's collectors,
// documented as one row ("`go_*`, `process_*`").
var standardPrefixes = []string{"go_", "process_"}

// Every series each daemon serves (its MetricNames, from its collectors) is
// in its section of metrics.md, and every family there is served.
func TestMetricsReferenceMatchesTheCode(t *testing.T) {
	code := map[string][]string{
		"harvest-driver": driver.MetricNames(),
		"harvest-placer": agent.MetricNames(),
		"harvest-blob":   front.MetricNames(),
	}
	docs := sections(t, "metrics.md", "metrics")
	for name := range docs {
		if _, ok := code[name]; !ok {
			t.Errorf("metrics.md has a section %q the test does not know", name)
		}
	}
	for daemon, names := range code {
		rows, ok := docs[daemon]
		if !ok {
			t.Errorf("metrics.md has no <!-- metrics: %s --> section", daemon)
			continue
		}
		if len(names) == 0 {
			t.Fatalf("%s: MetricNames is empty", daemon)
		}
		checkMetrics(t, daemon, names, rows)
	}
}

func checkMetrics(t *testing.T, daemon string, served []string, rows []row) {
	t.Helper()
	isServed := map[string]bool{}
	for _, n := range served {
		isServed[n] = true
	}
	documented := map[string]int{} // series name -> line
	standard := false
	for _, r := range rows {
		if len(r.cells) != 4 {
			t.Errorf("metrics.md:%d: want 4 cells (metric, type, labels, meaning), got %d", r.line, len(r.cells))
			continue
		}
		if strings.HasSuffix(r.name, "*") { // the standard collectors' row
			standard = true
			continue
		}
		typ := r.cells[1]
		var series []string
		switch typ {
		case "counter", "gauge":
			series = []string{r.name}
			if strings.HasSuffix(r.name, "_total") != (typ == "counter") {
				t.Errorf("metrics.md:%d: %s is a %s: counters, and only they, end in _total", r.line, r.name, typ)
			}
		case "histogram":
			series = []string{r.name + "_bucket", r.name + "_sum", r.name + "_count"}
		case "summary":
			series = []string{r.name, r.name + "_sum", r.name + "_count"}
		default:
			t.Errorf("metrics.md:%d: %s: type %q, want counter, gauge, histogram or summary", r.line, r.name, typ)
			continue
		}
		for _, s := range series {
			if _, dup := documented[s]; dup {
				t.Errorf("metrics.md:%d: %s: %s listed twice", r.line, daemon, s)
			}
			documented[s] = r.line
			if !isServed[s] {
				t.Errorf("metrics.md:%d: %s documents %s (%s), which it does not serve", r.line, daemon, s, typ)
			}
		}
	}
	var missing []string
	for _, n := range served {
		if _, ok := documented[n]; ok {
			continue
		}
		if hasStandardPrefix(n) {
			if !standard {
				missing = append(missing, n+" (add the `go_*`, `process_*` row)")
			}
			continue
		}
		missing = append(missing, n)
	}
	sort.Strings(missing)
	for _, n := range missing {
		t.Errorf("metrics.md, section %s: %s is served but not documented", daemon, n)
	}
	if standard && !anyStandard(served) {
		t.Errorf("metrics.md, section %s: lists the go_* and process_* collectors, which %s does not serve", daemon, daemon)
	}
}

func hasStandardPrefix(n string) bool {
	for _, p := range standardPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

func anyStandard(names []string) bool {
	for _, n := range names {
		if hasStandardPrefix(n) {
			return true
		}
	}
	return false
}
