package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// figure2CSV is the source's Figure 2 twice, three hours apart, as Alibaba
// rows (seconds; instances are the work rate): at each half's hours 0, 1, 2
// AW is 130, 700 and 15 instance-minutes and CL 2, 1 and 2 jobs.
func figure2CSV() string {
	rows := "create,end,job,task,instances,status,cpu,mem\n"
	for _, shift := range []int{0, 180} {
		for _, r := range []struct {
			job              string
			start, end, inst int
		}{{"a", -30, 30, 1}, {"b", -10, 100, 10}, {"c", 110, 130, 1}, {"d", 115, 130, 1}} {
			rows += strings.Join([]string{strconv.Itoa(60 * (shift + r.start)), strconv.Itoa(60 * (shift + r.end)), r.job + strconv.Itoa(shift), "1", strconv.Itoa(r.inst),
				"Terminated", "100", "0.01"}, ",") + "\n"
		}
	}
	return rows
}

func TestMaintenanceCommandWritesJSONCSVAndPlot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "batch_task.csv")
	if err := os.WriteFile(path, []byte(figure2CSV()), 0o644); err != nil {
		t.Fatal(err)
	}
	f := maintenanceFlags{trace: path, step: time.Hour, urgencies: "1,50", work: "containers", forfeit: "running", from: "0s", to: "6h",
		outputs: outputs{asJSON: true, jsonPath: filepath.Join(dir, "m.json"), csvPath: filepath.Join(dir, "m.csv"), plotPath: filepath.Join(dir, "m.png")}}
	var summary struct {
		Result struct {
			EvalPoints int `json:"evaluation_points"`
			Levels     []struct {
				Urgency int `json:"urgency"`
				AW      struct {
					Threshold   float64 `json:"threshold"`
					Candidates  int     `json:"candidate_points"`
					MeanForfeit float64 `json:"mean_forfeit"`
				} `json:"aw"`
				CL struct {
					MeanForfeit float64 `json:"mean_forfeit"`
				} `json:"cl"`
				Saving *float64 `json:"aw_saving_percent"`
			} `json:"levels"`
		} `json:"result"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runMaintenance(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	r := summary.Result
	// urgency 1: AW waits for the 2 h point (15 x 60 instance-s), CL takes the 1 h one (700 x 60)
	if r.EvalPoints != 3 || len(r.Levels) != 2 || r.Levels[0].AW.MeanForfeit != 900 || r.Levels[0].CL.MeanForfeit != 42000 ||
		r.Levels[0].Saving == nil || r.Levels[1].AW.Candidates != 2 {
		t.Fatalf("%+v", r)
	}
	if b, err := os.ReadFile(f.jsonPath); err != nil || !json.Valid(b) {
		t.Errorf("JSON file: %v", err)
	}
	if rows := readCSV(t, f.csvPath); len(rows) != 3 || rows[0][0] != "urgency" || rows[1][4] != "900" {
		t.Errorf("CSV %v", rows)
	}
	if fi, err := os.Stat(f.plotPath); err != nil || fi.Size() < 2000 {
		t.Errorf("plot: %v", err)
	}
	f.asJSON, f.jsonPath, f.csvPath, f.plotPath = false, "", "", ""
	if out := string(stdoutOf(t, func() error { return runMaintenance(f) })); !strings.Contains(out, "P50") || !strings.Contains(out, "first half profiles") {
		t.Errorf("table:\n%s", out)
	}
	f.trace = ""
	if err := runMaintenance(f); err == nil {
		t.Error("no -trace accepted")
	}
}
