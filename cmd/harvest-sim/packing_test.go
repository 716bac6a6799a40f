package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPackingCommandWritesJSONCSVAndPlot(t *testing.T) {
	dir := t.TempDir()
	f := packingFlags{seed: 1, headroom: 1.25, nodeMem: 6144, synHours: 6, synRunning: 60, synSeconds: 600, policies: "spread,packed",
		highThreshold: 0.6, minNodes: 5, releaseDelay: 10 * time.Minute, step: 5 * time.Minute,
		outputs: outputs{asJSON: true, jsonPath: filepath.Join(dir, "packing.json"), csvPath: filepath.Join(dir, "packing.csv"),
			plotPath: filepath.Join(dir, "packing.png")}}
	var summary struct {
		Nodes   int `json:"nodes"`
		Tasks   int `json:"tasks"`
		Results []struct {
			Policy    string  `json:"policy"`
			NodeHours float64 `json:"node_hours"`
			Tasks     int     `json:"tasks"`
		} `json:"results"`
		Savings []float64 `json:"node_hours_saved_percent_vs_spread"`
	}
	out := stdoutOf(t, func() error { return runPacking(f) })
	if err := json.Unmarshal(out, &summary); err != nil {
		t.Fatal(err)
	}
	if len(summary.Results) != 2 || summary.Results[0].Policy != "spread" || summary.Results[1].Policy != "packed" || summary.Nodes < 5 {
		t.Fatalf("summary %+v", summary)
	}
	sp, pk := summary.Results[0], summary.Results[1]
	if pk.Tasks != summary.Tasks || sp.Tasks != summary.Tasks || pk.NodeHours >= sp.NodeHours || len(summary.Savings) != 2 || summary.Savings[1] <= 0 {
		t.Errorf("spread %+v, packed %+v, savings %v: want every task run and packing saving node-hours", sp, pk, summary.Savings)
	}
	if b, err := os.ReadFile(f.jsonPath); err != nil || !json.Valid(b) {
		t.Errorf("JSON file: %v", err)
	}
	rows := readCSV(t, f.csvPath)
	if len(rows) < 70 || strings.Join(rows[0], ",") != "hours,spread_nodes_in_use,spread_releasable,spread_queued,packed_nodes_in_use,packed_releasable,packed_queued" {
		t.Errorf("CSV: %d rows, header %v; want 6 h in 5-minute samples", len(rows), rows[0])
	}
	if fi, err := os.Stat(f.plotPath); err != nil || fi.Size() < 2000 {
		t.Errorf("plot: %v", err)
	}
}

func TestPackingCommandReadsAnAlibabaTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "batch_task.csv")
	trace := "create,end,job,task,instances,status,cpu,mem\n" +
		"0,600,1,1,30,Terminated,50,0.01\n" +
		"60,120,2,1,5,Terminated,50,0.02\n" +
		"100,100,3,1,4,Waiting,,\n" // never ran
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	f := packingFlags{seed: 1, nodes: 10, headroom: 1.25, nodeMem: 6144, machineMem: 65536, sample: 1, trace: path, policies: "spread,binpack,packed",
		highThreshold: 0.6, minNodes: 5, releaseDelay: 10 * time.Minute, step: time.Minute}
	out := string(stdoutOf(t, func() error { return runPacking(f) }))
	if !strings.HasPrefix(out, "35 tasks") || !strings.Contains(out, "packed ") || !strings.Contains(out, "binpack ") {
		t.Errorf("want 35 instances simulated and a row per policy:\n%s", out)
	}
}
