package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func smallEscalation(dir string) escalationFlags {
	return escalationFlags{seed: 4, delays: "5m,20m", classes: 4, perClass: 10, slots: 4, load: 0.55, hours: 12, flaky: 0.1, faultP: 0.3,
		evictP: 0.03, threshold: 3, reset: 6 * time.Hour, outputs: outputs{csvPath: filepath.Join(dir, "e.csv"),
			plotPath: filepath.Join(dir, "e.png"), jsonPath: filepath.Join(dir, "e.json")}}
}

func TestEscalationCommandWritesJSONCSVAndPlot(t *testing.T) {
	dir := t.TempDir()
	f := smallEscalation(dir)
	f.asJSON = true
	var summary struct {
		Jobs    int `json:"jobs"`
		Results []struct {
			Name     string  `json:"name"`
			Jobs     int     `json:"jobs"`
			Finished int     `json:"finished"`
			P90Wait  float64 `json:"p90_wait_seconds"`
			Lost     int     `json:"tasks_lost_to_node_faults"`
			Flaky    int     `json:"placements_on_flaky_nodes"`
			Grey     int     `json:"greylisted_max"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runEscalation(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	rs := summary.Results
	// baseline, escalation 5m and 20m, greylisting, escalation 5m + greylisting
	if len(rs) != 5 || rs[0].Name != "strict classes (baseline)" || rs[1].Name != "escalation 5m" || rs[3].Name != "greylisting" {
		t.Fatalf("runs %+v", rs)
	}
	for _, r := range rs {
		if r.Jobs != summary.Jobs || r.Finished != r.Jobs {
			t.Errorf("%+v: want all %d jobs finished", r, summary.Jobs)
		}
	}
	if rs[1].P90Wait >= rs[0].P90Wait || rs[3].Lost >= rs[0].Lost || rs[3].Flaky >= rs[0].Flaky || rs[3].Grey == 0 || rs[1].Grey != 0 {
		t.Errorf("want escalation to cut the p90 wait and greylisting the lost tasks and flaky placements: %+v", rs)
	}
	if rows := readCSV(t, f.csvPath); len(rows) != 6 || rows[0][0] != "policy" || rows[5][0] != "escalation 5m + greylisting" {
		t.Errorf("CSV %v: want a header and 5 runs", rows)
	}
	for _, p := range []string{f.jsonPath, f.plotPath} {
		if fi, err := os.Stat(p); err != nil || fi.Size() < 500 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestEscalationCommandPrintsATable(t *testing.T) {
	f := smallEscalation(t.TempDir())
	f.classes, f.hours = 3, 4 // three classes: weights halve
	out := string(stdoutOf(t, func() error { return runEscalation(f) }))
	for _, want := range []string{"POLICY", "escalation 20m vs strict classes: p90 wait", "greylisting vs none: tasks lost to node faults",
		"30 nodes in 3 classes"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if shortDuration(90*time.Second) != "1m30s" || shortDuration(2*time.Hour) != "2h" {
		t.Error("shortDuration")
	}
	for _, bad := range []string{"", "0s", "soon"} {
		g := f
		g.delays = bad
		if err := runEscalation(g); err == nil {
			t.Errorf("-delays %q accepted", bad)
		}
	}
}
