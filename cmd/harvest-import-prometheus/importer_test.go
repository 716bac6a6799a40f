package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// pluginDir holds this command's binary, built once for the package: the
// tests run it as a real plugin process, through the plugin manager.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harvest-import-prometheus-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir = dir
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "harvest-import-prometheus"), ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	t0      = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	reimage = t0.Add(250 * step) // node-b's boot time changes here
	gapAt   = t0.Add(7 * step)   // node-a has no point here
)

// cpuAt is the fake tenant's CPU percent on a node at a time.
func cpuAt(node string, ts time.Time) float64 {
	k := float64(ts.Sub(t0) / step)
	if node == "node-b" {
		return 50 + math.Mod(k, 7)
	}
	return 10 + math.Mod(k, 5)
}

// prometheus answers /api/v1/query_range as Prometheus does (a matrix of
// [unix seconds, "value"] pairs at start + k*step), for a CPU query and a
// boot-time query, and records each call's window.
type prometheus struct {
	mu      sync.Mutex
	windows []string
}

func (p *prometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query_range" || r.ParseForm() != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	q := r.Form.Get("query")
	start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
	end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
	stepS, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
	p.mu.Lock()
	p.windows = append(p.windows, fmt.Sprintf("%s %d-%d/%v", strings.Fields(q)[0], int64(start), int64(end), stepS))
	p.mu.Unlock()
	type stream struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	var result []stream
	for _, node := range []string{"node-a", "node-b"} {
		s := stream{Metric: map[string]string{"instance": node, "harvest_tenant": "search/frontend"}, Values: [][2]any{}}
		for ts := start; ts <= end; ts += stepS {
			at := time.Unix(int64(ts), 0).UTC()
			switch {
			case strings.HasPrefix(q, "node_boot_time_seconds"):
				boot := 1.7e9
				if node == "node-b" && !at.Before(reimage) {
					boot = float64(reimage.Unix())
				}
				s.Values = append(s.Values, [2]any{ts, strconv.FormatFloat(boot, 'f', -1, 64)})
			case node == "node-a" && at.Equal(gapAt):
			default:
				s.Values = append(s.Values, [2]any{ts, strconv.FormatFloat(cpuAt(node, at), 'f', -1, 64)})
			}
		}
		result = append(result, s)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
}

func TestImportOverGoPlugin(t *testing.T) {
	prom := &prometheus{}
	srv := httptest.NewServer(prom)
	defer srv.Close()
	cfg, err := manager.ParseConfig([]byte(fmt.Sprintf(`plugin_dir = %q
history_importer "prometheus" {
  driver = "harvest-import-prometheus"
  config = {
    address                = %q
    query_template         = "100 * avg by (instance) (rate(node_cpu_seconds_total{mode!=\"idle\",harvest_tenant=\"$tenant\"}[2m]))"
    reimage_query_template = "node_boot_time_seconds{harvest_tenant=\"$tenant\"}"
    chunk_steps            = "100"
  }
}`, pluginDir, srv.URL)), "test.hcl")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manager.New(cfg, manager.Builtins{}, manager.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info})})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	imp, _ := m.HistoryImporter("prometheus")

	// 300 slots from t0 (the range starts mid-slot: the first whole slot is t0)
	var recs []historyimporter.Record
	r := historyimporter.Range{Start: t0.Add(-30 * time.Second), End: t0.Add(300 * step)}
	err = imp.Import(context.Background(), r, []string{"search/frontend"}, func(rec historyimporter.Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// three windows of 100 steps, each a CPU query and a boot-time query
	want := []string{}
	for w := range 3 {
		ws, we := t0.Add(time.Duration(w*100)*step).Unix(), t0.Add(time.Duration(w*100+99)*step).Unix()
		for _, q := range []string{"100", "node_boot_time_seconds{harvest_tenant=\"search/frontend\"}"} {
			want = append(want, fmt.Sprintf("%s %v-%v/120", q, ws, we))
		}
	}
	if got := strings.Join(prom.windows, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("queries:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}

	var chunks, reimages int
	for _, rec := range recs {
		if e := rec.Reimage; e != nil {
			reimages++
			if e.Tenant != "search/frontend" || e.Node != "node-b" || !e.Time.Equal(reimage) {
				t.Errorf("reimage %+v, want node-b at %s", e, reimage)
			}
			continue
		}
		c := rec.Series
		chunks++
		if c.Tenant != "search/frontend" || c.StepSeconds != 120 || len(c.Values) != 100 || c.Start.Sub(t0)%(100*step) != 0 {
			t.Fatalf("chunk %s %s from %s: %d values, step %d", c.Tenant, c.Node, c.Start, len(c.Values), c.StepSeconds)
		}
		for i, v := range c.Values {
			at := c.Start.Add(time.Duration(i) * step)
			if c.Node == "node-a" && at.Equal(gapAt) {
				if !math.IsNaN(v) {
					t.Errorf("the gap at %s came back as %v", at, v)
				}
			} else if v != cpuAt(c.Node, at) {
				t.Fatalf("%s at %s: %v, want %v", c.Node, at, v, cpuAt(c.Node, at))
			}
		}
	}
	if chunks != 6 || reimages != 1 {
		t.Fatalf("%d chunks and %d reimages, want 6 (2 nodes x 3 windows) and 1", chunks, reimages)
	}
}

// Prometheus refusing a query is an error of the import, not a crash.
func TestImportQueryErrorIsReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"parse error at char 5"}`)
	}))
	defer srv.Close()
	cfg, _ := manager.ParseConfig([]byte(fmt.Sprintf(`plugin_dir = %q
history_importer "p" {
  driver = "harvest-import-prometheus"
  config = { address = %q, "query.web/api" = "up(" }
}`, pluginDir, srv.URL)), "test.hcl")
	m, err := manager.New(cfg, manager.Builtins{}, manager.Options{Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	imp, _ := m.HistoryImporter("p")
	err = imp.Import(context.Background(), historyimporter.Range{Start: t0, End: t0.Add(time.Hour)}, nil,
		func(historyimporter.Record) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "parse error at char 5") {
		t.Fatalf("got %v", err)
	}
	if s := m.States()[0]; !s.Up || s.Restarts != 0 {
		t.Fatalf("state: %+v", s)
	}
}
