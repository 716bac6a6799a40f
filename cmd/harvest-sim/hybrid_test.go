package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHybridCommandWritesJSONCSVAndPlot(t *testing.T) {
	dir := t.TempDir()
	f := hybridFlags{seed: 2, nodes: 100, jobs: 1500, trace: "synthetic", loads: "0.5,0.9", policies: "none,partition", steal: 10, probes: 2,
		swimSeconds: 30, outputs: outputs{asJSON: true, jsonPath: filepath.Join(dir, "h.json"), csvPath: filepath.Join(dir, "h.csv"),
			plotPath: filepath.Join(dir, "h.png")}}
	var summary struct {
		Runs []struct {
			Load   float64 `json:"load"`
			Policy string  `json:"policy"`
			Jobs   int     `json:"jobs"`
			Short  struct {
				Jobs int     `json:"jobs"`
				P90  float64 `json:"p90_seconds"`
			} `json:"short"`
			PartitionMax int `json:"partition_max"`
		} `json:"runs"`
		Gains map[string]float64 `json:"partition_short_p90_reduction_percent"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runHybrid(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	if len(summary.Runs) != 4 || summary.Runs[0].Load != 0.5 || summary.Runs[0].Policy != "none" || summary.Runs[3].Policy != "partition" {
		t.Fatalf("runs %+v: want 2 loads x 2 policies in order", summary.Runs)
	}
	for _, r := range summary.Runs {
		if r.Jobs != 1500 || r.Short.Jobs < 1200 || (r.Policy == "partition") != (r.PartitionMax > 0) {
			t.Errorf("%+v: want 1500 jobs, most of them short, and a partition only under partition", r)
		}
	}
	if g, ok := summary.Gains["0.9"]; !ok || g <= 0 {
		t.Errorf("gains %v: want the partition to lower short p90 at load 0.9", summary.Gains)
	}
	if rows := readCSV(t, f.csvPath); len(rows) != 5 || rows[0][0] != "load" || rows[4][1] != "partition" {
		t.Errorf("CSV %v: want a header and 4 runs", rows)
	}
	for _, p := range []string{f.jsonPath, f.plotPath} {
		if fi, err := os.Stat(p); err != nil || fi.Size() < 500 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestHybridCommandReadsASWIMTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tiny.tsv")
	var b strings.Builder
	for i := 0; i < 200; i++ {
		input := "1000" // one map task
		if i%10 == 0 {
			input = "6710886400" // 100 map tasks, folded into 5
		}
		b.WriteString("job" + string(rune('0'+i%10)) + "\t1\t1\t" + input + "\t0\t10\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f := hybridFlags{seed: 1, nodes: 100, jobs: 150, trace: "swim:" + path, loads: "0.8", policies: "none,partition", steal: 10, probes: 2,
		swimSeconds: 30, outputs: outputs{csvPath: filepath.Join(dir, "s.csv")}}
	out := string(stdoutOf(t, func() error { return runHybrid(f) }))
	if !strings.Contains(out, "swim:tiny, 100 nodes, 2 runs") || !strings.Contains(out, "load 0.8: short-job p90") {
		t.Errorf("output:\n%s", out)
	}
	rows := readCSV(t, f.csvPath)
	if len(rows) != 3 || rows[1][3] != "150" || rows[1][8] == "0" {
		t.Errorf("CSV %v: want 150 jobs per run (the trace's first 150), some of them long", rows)
	}
	for _, bad := range []hybridFlags{{trace: "alibaba:x", nodes: 10, loads: "1", policies: "none", probes: 2}, {trace: "synthetic", nodes: 10, loads: "0", policies: "none", probes: 2},
		{trace: "synthetic", nodes: 10, loads: "1", policies: "hawk", probes: 2}} {
		if err := runHybrid(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
