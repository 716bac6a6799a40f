package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/sim/storagesim"
)

// stdoutOf runs fn with os.Stdout sent to a pipe and returns what it wrote.
func stdoutOf(t *testing.T, fn func() error) []byte {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	err = fn()
	os.Stdout = saved
	w.Close()
	out := <-done
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestStorageCommandWritesJSONCSVAndPlot(t *testing.T) {
	dir := t.TempDir()
	f := storageFlags{seed: 3, profiles: "2-3", replicas: "3,4", policies: "stock,grid", servers: 150, blocks: 3000, runs: 2,
		repair: 30, fill: 0.5, history: 60,
		outputs: outputs{asJSON: true, csvPath: filepath.Join(dir, "lost.csv"), plotPath: filepath.Join(dir, "fig15.png")}}
	var summary struct {
		Results []struct {
			Datacenter string `json:"datacenter"`
			Policy     string `json:"policy"`
			Replicas   int    `json:"replicas"`
			Blocks     int    `json:"blocks"`
			Reimages   int    `json:"reimages"`
			Lost       int    `json:"lost_blocks"`
		} `json:"results"`
		Wall float64 `json:"wall_seconds"`
		RSS  float64 `json:"peak_rss_mib"`
		ByDC map[string]map[string]struct {
			Stock int `json:"stock_lost"`
			Grid  int `json:"grid_lost"`
		} `json:"stock_over_grid_lost_by_datacenter"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runStorage(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	// 2 datacenters x 2 replication levels x 2 policies x 2 runs
	if len(summary.Results) != 16 || summary.Wall <= 0 || summary.RSS <= 0 {
		t.Fatalf("%d results, wall %v s, peak RSS %v MiB; want 16 and both measured", len(summary.Results), summary.Wall, summary.RSS)
	}
	if r := summary.Results[0]; r.Datacenter != "dc-2" || r.Policy != "stock" || r.Replicas != 3 || r.Blocks != 3000 || r.Reimages == 0 {
		t.Errorf("first result %+v, want dc-2 stock R=3 with 3000 blocks and some reimages", r)
	}
	lost := map[string]int{} // datacenter, policy, R -> blocks lost over the runs
	for _, r := range summary.Results {
		lost[fmt.Sprintf("%s %s R=%d", r.Datacenter, r.Policy, r.Replicas)] += r.Lost
	}
	for _, dc := range []string{"dc-2", "dc-3"} {
		for _, r := range []int{3, 4} {
			got := summary.ByDC[dc][fmt.Sprintf("R=%d", r)]
			if want := lost[fmt.Sprintf("%s stock R=%d", dc, r)]; got.Stock != want {
				t.Errorf("%s R=%d: stock lost %d by datacenter, %d in its runs", dc, r, got.Stock, want)
			}
			if want := lost[fmt.Sprintf("%s grid R=%d", dc, r)]; got.Grid != want {
				t.Errorf("%s R=%d: grid lost %d by datacenter, %d in its runs", dc, r, got.Grid, want)
			}
		}
	}
	if lost["dc-2 stock R=3"]+lost["dc-3 stock R=3"] == 0 {
		t.Errorf("stock lost no block at R=3 on either datacenter: the per-datacenter sums check nothing")
	}
	rows := readCSV(t, f.csvPath)
	if len(rows) != 17 || rows[0][0] != "datacenter" || rows[16][0] != "dc-3" || rows[16][1] != "grid" {
		t.Errorf("CSV has %d rows (want a header and 16), last %v", len(rows), rows[len(rows)-1])
	}
	if fi, err := os.Stat(f.plotPath); err != nil || fi.Size() < 2000 {
		t.Errorf("plot: %v", err)
	}
}

func TestStorageCommandReplaysAReimageCSV(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	events := map[history.TenantID][]history.Reimage{}
	for i, env := range []string{"search", "mail", "ads", "maps", "video"} {
		id := history.TenantID{Environment: env, Function: "fe"}
		for s := 0; s < 4; s++ {
			node := env + "-" + string(rune('a'+s))
			events[id] = append(events[id], history.Reimage{Node: node, Time: start.Add(time.Duration(i*7+s) * time.Hour)})
			if env == "mail" { // mail's servers all go again together on day 100
				events[id] = append(events[id], history.Reimage{Node: node, Time: start.Add(100*24*time.Hour + time.Duration(s)*time.Minute)})
			}
		}
	}
	path := filepath.Join(dir, "reimages.csv")
	fh, _ := os.Create(path)
	if err := csvfmt.WriteReimages(fh, events); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	f := storageFlags{seed: 1, replicas: "3", policies: "stock,grid", blocks: 2000, runs: 1, repair: 30, fill: 0.5, history: 30,
		reimages: path, outputs: outputs{csvPath: filepath.Join(dir, "out.csv")}}
	out := stdoutOf(t, func() error { return runStorage(f) })
	rows := readCSV(t, f.csvPath)
	if len(rows) != 3 {
		t.Fatalf("%d CSV rows, want a header and 2:\n%s", len(rows), out)
	}
	for _, row := range rows[1:] {
		// the four day-100 reimages replay; the day-0 ones are history; 20 servers
		if row[7] != "4" || row[13] != "20" {
			t.Errorf("%v: want 4 reimages replayed on 20 servers", row)
		}
	}
	if !strings.Contains(string(out), "R=3: stock lost") {
		t.Errorf("no stock/grid summary in:\n%s", out)
	}
}

func TestAccessCommandFindsWhereFailedReadsBegin(t *testing.T) {
	dir := t.TempDir()
	f := accessFlags{seed: 2, profiles: "9", runs: 1, servers: 200, blocks: 2000, accesses: 20000, days: 3, historyDays: 1, threshold: 67,
		utilisations: "70,20,45", replicas: "3", policies: "stock,grid", scaling: "linear",
		outputs: outputs{asJSON: true, csvPath: filepath.Join(dir, "access.csv"), plotPath: filepath.Join(dir, "fig16.png")}}
	var summary struct {
		Points []struct {
			Utilisation float64 `json:"utilisation"`
			FailedPct   float64 `json:"failed_percent"`
		} `json:"points"`
		Clean map[string]float64 `json:"no_failed_reads_up_to"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runAccess(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	if len(summary.Points) != 6 || summary.Points[0].Utilisation != 20 || summary.Points[5].Utilisation != 70 {
		t.Fatalf("points %+v: want 3 utilisations, sorted, x 2 policies", summary.Points)
	}
	if summary.Points[5].FailedPct <= summary.Points[0].FailedPct {
		t.Errorf("failed reads did not rise from 20%% to 70%%: %+v", summary.Points)
	}
	if _, ok := summary.Clean["grid R=3"]; !ok {
		t.Errorf("no clean-up-to for grid R=3: %v", summary.Clean)
	}
	if rows := readCSV(t, f.csvPath); len(rows) != 7 || !slices.Equal(rows[0][:3], []string{"datacenter", "datacenter_seed", "run_seed"}) ||
		rows[1][1] != "2" || rows[1][2] != "2" || !slices.Contains(rows[0], "failed_on_lone_busy_slot") {
		t.Errorf("CSV %v: want a header naming both seeds and the lone-slot count, and 6 rows of seed 2", rows)
	}
	if fi, err := os.Stat(f.plotPath); err != nil || fi.Size() < 2000 {
		t.Errorf("plot: %v", err)
	}
}

// TestAccessCommandRunsProfilesSeveralTimes: -profiles and -runs give a
// point per datacenter, run, utilisation and policy, curves whose bars
// hold the runs' mean, and where reads begin to fail per datacenter.
func TestAccessCommandRunsProfilesSeveralTimes(t *testing.T) {
	f := accessFlags{seed: 2, profiles: "8-9", runs: 2, servers: 200, blocks: 2000, accesses: 20000, days: 3, historyDays: 1, threshold: 67,
		utilisations: "30,70", replicas: "3", policies: "grid", scaling: "linear", outputs: outputs{asJSON: true}}
	var summary struct {
		Points []struct {
			Datacenter  string  `json:"datacenter"`
			RunSeed     uint64  `json:"run_seed"`
			Utilisation float64 `json:"utilisation"`
			Failed      int     `json:"failed"`
			Accesses    int     `json:"accesses"`
		} `json:"points"`
		Curves []struct {
			Name string    `json:"name"`
			X    []float64 `json:"x"`
			Y    []float64 `json:"y"`
			Low  []float64 `json:"low"`
			High []float64 `json:"high"`
		} `json:"curves"`
		ByDC map[string]map[string]float64 `json:"no_failed_reads_up_to_by_datacenter"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runAccess(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	failedAt70 := map[uint64]int{} // run seed -> failed reads over both datacenters
	accessesAt70 := 0
	for _, pt := range summary.Points {
		runs[fmt.Sprintf("%s/%d", pt.Datacenter, pt.RunSeed)] = true
		if pt.Utilisation == 70 {
			failedAt70[pt.RunSeed] += pt.Failed
			accessesAt70 = pt.Accesses * 2
		}
	}
	if len(summary.Points) != 8 || len(runs) != 4 || !runs["dc-8/2"] || !runs["dc-9/3"] {
		t.Fatalf("%d points of runs %v: want 2 datacenters x seeds 2 and 3 x 2 utilisations", len(summary.Points), runs)
	}
	if len(summary.Curves) != 1 || len(summary.Curves[0].X) != 2 {
		t.Fatalf("curves %+v: want grid R=3 at 30 and 70", summary.Curves)
	}
	c := summary.Curves[0]
	for i := range c.X {
		if c.Low[i] > c.Y[i] || c.Y[i] > c.High[i] {
			t.Errorf("at %.0f%%: mean %v outside its runs' %v-%v", c.X[i], c.Y[i], c.Low[i], c.High[i])
		}
	}
	a, b := 100*float64(failedAt70[2])/float64(accessesAt70), 100*float64(failedAt70[3])/float64(accessesAt70)
	if c.High[1] == 0 || c.Y[1] != (a+b)/2 || c.Low[1] != min(a, b) || c.High[1] != max(a, b) {
		t.Errorf("at 70%%: curve %v (%v-%v), want the mean of the runs' pooled %v and %v and their range", c.Y[1], c.Low[1], c.High[1], a, b)
	}
	if len(summary.ByDC) != 2 || summary.ByDC["dc-8"] == nil || summary.ByDC["dc-9"] == nil {
		t.Errorf("per datacenter: %v", summary.ByDC)
	}
	f.runs = 0
	if err := runAccess(f); err == nil {
		t.Error("-runs 0 accepted")
	}
}

// TestAccessTableGivesEachPointsRuns: a row per datacenter, utilisation,
// policy and R, with the runs' mean (min-max).
func TestAccessTableGivesEachPointsRuns(t *testing.T) {
	pt := func(dc string, run uint64, failed, lone int) storagesim.AccessPoint {
		return storagesim.AccessPoint{Datacenter: dc, RunSeed: run, Policy: storagesim.Grid, Replicas: 3, Utilisation: 50,
			Failed: failed, FailedOnLoneSlot: lone, Accesses: 1000, FailedPct: float64(failed) / 10, MostLoaded: 1 + float64(run)/10}
	}
	var out strings.Builder
	printAccessTable(&out, []storagesim.AccessPoint{pt("dc-1", 1, 2, 1), pt("dc-2", 1, 0, 0), pt("dc-1", 2, 5, 4), pt("dc-2", 2, 0, 0)}, 2)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"dc-1", "50", "0.0", "grid", "3", "3.5", "(2-5)", "0.3500", "2.5", "1.20"},
		{"dc-2", "50", "0.0", "grid", "3", "0.0", "(0-0)", "0.0000", "0.0", "1.20"},
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and 2 rows:\n%s", len(lines), out.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i+1]); !slices.Equal(got, w) {
			t.Errorf("row %d: %q, want %q", i, got, w)
		}
	}
}

func TestParseProfiles(t *testing.T) {
	for in, want := range map[string][]int{"all": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "3": {3}, "0-2": {0, 1, 2}, "7,1-2,7": {7, 1, 2}} {
		if got, err := parseProfiles(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "10", "3-1", "a", "-1"} {
		if _, err := parseProfiles(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestStorageCommandReplaysADiskLog: -lifetimes reads a disk log (one
// server retired half-way, one disk failed in the replayed year), reports
// the retirement and its drained replicas, and refuses -inventory beside it.
func TestStorageCommandReplaysADiskLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "disks.csv")
	var b strings.Builder
	b.WriteString("tenant,node,rack,disk,first_seen,last_seen,failed\n")
	envs := []string{"search", "mail", "ads", "maps", "video", "db"}
	for i, env := range envs {
		for s := 0; s < 3; s++ {
			node := env + "-" + string(rune('a'+s))
			last, failed := "2027-12-31T00:00:00Z", ""
			switch {
			case i == 0 && s == 0:
				last = "2027-07-01T00:00:00Z" // retired
			case i == 1 && s == 0:
				last, failed = "2027-05-01T00:00:00Z", "2027-05-01T00:00:00Z" // failed, replaced below
				b.WriteString(env + "/fn," + node + ",r1," + node + "-2,2027-05-02T00:00:00Z,2027-12-31T00:00:00Z,\n")
			}
			b.WriteString(env + "/fn," + node + ",r1," + node + ",2026-01-01T00:00:00Z," + last + "," + failed + "\n")
		}
	}
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f := storageFlags{seed: 1, replicas: "3", policies: "grid", blocks: 2000, runs: 1, repair: 30, fill: 0.5, history: 365,
		lifetimes: log, outputs: outputs{asJSON: true}}
	var summary struct {
		Results []struct {
			Reimages    int `json:"reimages"`
			Retirements int `json:"retirements"`
			Drained     int `json:"drained_replicas"`
			Lost        int `json:"lost_blocks"`
			Servers     int `json:"servers"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdoutOf(t, func() error { return runStorage(f) }), &summary); err != nil {
		t.Fatal(err)
	}
	if len(summary.Results) != 1 {
		t.Fatalf("%d results, want 1", len(summary.Results))
	}
	if r := summary.Results[0]; r.Reimages != 1 || r.Retirements != 1 || r.Drained == 0 || r.Lost != 0 || r.Servers != 18 {
		t.Fatalf("result %+v: want 1 failure replayed, 1 retirement drained, nothing lost, 18 servers", r)
	}
	f.inventory = log
	if err := runStorage(f); err == nil || !strings.Contains(err.Error(), "-lifetimes") {
		t.Fatalf("-lifetimes with -inventory: %v", err)
	}
}
