package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

// writeLongHistory writes 2 tenants x days of 2-minute samples in the long
// CSV, gzipped: one steady, one that swings every day.
func writeLongHistory(t *testing.T, path string, days int) {
	writeHistoryCSV(t, path, days, func(w io.Writer, k int, at string) {
		fmt.Fprintf(w, "steady/svc,%s,30\n", at)
		fmt.Fprintf(w, "daily/web,%s,%.1f\n", at, 40+30*float64((k/360)%2))
	})
}

// writeHistoryCSV writes days of 2-minute slots in the long CSV, gzipped,
// from 2026-09-01: rows writes slot k's rows.
func writeHistoryCSV(t *testing.T, path string, days int, rows func(w io.Writer, k int, at string)) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(fh)
	fmt.Fprintln(zw, "tenant,timestamp,cpu_percent")
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	for k := 0; k < days*720; k++ {
		rows(zw, k, start.Add(time.Duration(k)*2*time.Minute).Format(time.RFC3339))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSchedReplaysALongCSVHistoryOverSeeds(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.csv.gz")
	writeLongHistory(t, hist, 10)
	f := schedFlags{preset: "paper", seed: 3, seeds: 2, servers: 40, days: 2, historyDays: 8, histFile: hist, scalings: "linear",
		factors: "1", policies: "pt,h", jobs: "tpcds", workers: 2, set: map[string]bool{},
		outputs: outputs{asJSON: true, csvPath: filepath.Join(dir, "s.csv"), plotPath: filepath.Join(dir, "s.png")}}
	var summary struct {
		Preset string `json:"preset"`
		Points []struct {
			Source string `json:"source"`
			Policy string `json:"policy"`
			Seeds  int    `json:"seeds"`
		} `json:"points"`
		Results []struct {
			Servers int    `json:"servers"`
			Seed    uint64 `json:"seed"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runSched(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	if summary.Preset != "paper" || len(summary.Points) != 2 || summary.Points[0].Source != "history.csv.gz" || summary.Points[0].Seeds != 2 {
		t.Fatalf("points %+v: want pt and h over 2 seeds of history.csv.gz", summary.Points)
	}
	if len(summary.Results) != 4 || summary.Results[0].Servers != 40 || summary.Results[1].Seed != 4 {
		t.Fatalf("results %+v: want 4 runs of 40 servers, seeds 3 and 4", summary.Results)
	}
	if rows := readCSV(t, f.csvPath); len(rows) != 3 || rows[0][0] != "source" {
		t.Errorf("CSV %v: want a header and 2 points", rows)
	}
	if fi, err := os.Stat(f.plotPath); err != nil || fi.Size() < 500 {
		t.Errorf("plot: %v", err)
	}
}

func TestSchedRefusesTooShortAHistoryAndUnknownPresets(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "short.csv.gz")
	writeLongHistory(t, hist, 3)
	f := schedFlags{preset: "paper", seeds: 1, servers: 10, days: 2, historyDays: 8, histFile: hist, scalings: "linear", factors: "1",
		policies: "pt", jobs: "tpcds", workers: 1, set: map[string]bool{}}
	if err := runSched(f); err == nil || !strings.Contains(err.Error(), "too little history") {
		t.Fatalf("3 days for 8 of history: %v", err)
	}
	f.preset = "yarn"
	if err := runSched(f); err == nil || !strings.Contains(err.Error(), "-preset") {
		t.Fatalf("an unknown preset: %v", err)
	}
}

func TestSchedExplainListsEverySource(t *testing.T) {
	out := string(stdoutOf(t, func() error {
		return runSched(schedFlags{preset: "paper", explain: true, set: map[string]bool{}})
	}))
	for _, want := range []string{"L247", "L254", "L219", "L302", "L275"} {
		if !strings.Contains(out, want) {
			t.Errorf("-explain does not cite %s:\n%s", want, out)
		}
	}
}

// The preset tables of docs/simulator.md are the presets: a changed value
// or source must be changed there too.
func TestReadmeTablesArePresets(t *testing.T) {
	readme, err := os.ReadFile("../../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range schedsim.Presets() {
		for _, q := range p.Params {
			row := fmt.Sprintf("| %s | %s | %s |", q.Name, q.Value, strings.ReplaceAll(q.Source, "|", "/"))
			if !strings.Contains(string(readme), row) {
				t.Errorf("docs/simulator.md lacks the %s preset's row %q", name, row)
			}
		}
	}
}

// TestSchedNoiseScalesTheSyntheticProfilesOnly: -noise shrinks the
// generated tenants' slot-to-slot variation, names the source after it, and
// is refused for real histories and at 0.
func TestSchedNoiseScalesTheSyntheticProfilesOnly(t *testing.T) {
	variation := func(noise float64) (string, float64) {
		f := schedFlags{profiles: "4", servers: 60, days: 2, noise: noise}
		src, err := schedSources(f, 2)
		if err != nil || len(src) != 1 {
			t.Fatalf("noise %g: %v", noise, err)
		}
		var sum float64
		var n int
		for _, tn := range src[0].tenants {
			v := tn.Series.Values
			for k := 1; k < len(v); k++ {
				sum += math.Abs(v[k] - v[k-1])
				n++
			}
		}
		return src[0].name, sum / float64(n)
	}
	name1, as := variation(1)
	name2, calm := variation(0.01)
	if name1 != "dc-4" || name2 != "dc-4-noise0.01" {
		t.Errorf("sources %q and %q: want dc-4 and dc-4-noise0.01", name1, name2)
	}
	if calm > as/3 {
		t.Errorf("mean slot-to-slot change %.2f points with -noise 0.01 against %.2f: want it well below", calm, as)
	}
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.csv.gz")
	writeLongHistory(t, hist, 10)
	for _, f := range []schedFlags{
		{preset: "paper", histFile: hist, noise: 0.5, set: map[string]bool{"noise": true}},
		{preset: "paper", profiles: "4", noise: 0, set: map[string]bool{"noise": true}},
	} {
		if err := runSched(f); err == nil || !strings.Contains(err.Error(), "-noise") {
			t.Errorf("%+v: want -noise refused, got %v", f, err)
		}
	}
}

// A long CSV whose tenants start on different days (a VM created late in
// the first month) keeps the whole span: the late tenant joins when its
// history starts (NaN before), instead of cutting every tenant to the days
// they all share; a tenant with less than a day of history is an error
// that names it.
func TestALateTenantKeepsTheWholeSpan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "late.csv.gz")
	writeHistoryCSV(t, path, 40, func(w io.Writer, k int, at string) {
		fmt.Fprintf(w, "early/svc,%s,30\n", at)
		if k >= 12*720 { // joins on day 12
			fmt.Fprintf(w, "late/svc,%s,50\n", at)
		}
	})
	tenants, days, err := historyTenants(path, 20)
	if err != nil {
		t.Fatal(err)
	}
	if days != 40 || len(tenants) != 2 {
		t.Fatalf("%d days, %d tenants: want the whole 40 days of both", days, len(tenants))
	}
	for _, tn := range tenants {
		v := tn.Series.Values
		if len(v) != 40*720 {
			t.Fatalf("%s: %d slots, want 40 days'", tn.ID, len(v))
		}
		if tn.ID == "late/svc" && (!math.IsNaN(v[12*720-1]) || v[12*720] != 50) {
			t.Fatalf("late/svc: %v before its start and %v at it, want NaN then 50", v[12*720-1], v[12*720])
		}
	}
	// simulated, the late tenant's servers take nothing before day 12: the
	// run is over the 10 days after the 30 of history, with both tenants
	cfg := schedsim.Config{Policy: schedsim.PT, Tenants: tenants, HistoryDays: 30, Span: 10 * 24 * time.Hour, Seed: 1}
	r, err := schedsim.Run(cfg)
	if err != nil || r.Jobs == 0 {
		t.Fatalf("the 10 days after the history: %+v %v", r, err)
	}

	short := filepath.Join(t.TempDir(), "short-tenant.csv.gz")
	writeHistoryCSV(t, short, 3, func(w io.Writer, k int, at string) {
		fmt.Fprintf(w, "long/svc,%s,20\n", at)
		if k < 100 {
			fmt.Fprintf(w, "brief/svc,%s,20\n", at)
		}
	})
	if _, _, err := historyTenants(short, 10); err == nil || !strings.Contains(err.Error(), "brief/svc") {
		t.Fatalf("a tenant of 100 samples: %v, want an error naming it", err)
	}
}
