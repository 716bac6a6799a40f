package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

// writeFile writes src to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gathered is one series' value in the placer's registry (0 when absent).
func gathered(t *testing.T, m *Metrics, name, labels string) float64 {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			var ls []string
			for _, l := range s.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			if strings.Join(ls, ",") != labels {
				continue
			}
			if s.GetCounter() != nil {
				return s.GetCounter().GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	return 0
}

// csvPlugins writes a long-format CSV of search/frontend (slot k holds
// k mod 100, from now-1d to now+1h) and ads/indexer (50), and a plugin
// config with a csv-long block "csv" reading it.
func csvPlugins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("tenant,timestamp,cpu_percent\n")
	for at := now.Add(-24 * time.Hour); at.Before(now.Add(time.Hour)); at = at.Add(history.Slot) {
		k := int(at.Sub(now.Add(-24*time.Hour)) / history.Slot)
		fmt.Fprintf(&b, "search/frontend,%s,%d\nads/indexer,%s,50\n", at.Format(time.RFC3339), k%100, at.Format(time.RFC3339))
	}
	csv := writeFile(t, dir, "long.csv", b.String())
	return writeFile(t, dir, "plugins.hcl", fmt.Sprintf(`
history_importer "csv" {
  driver = "csv-long"
  config = { path = %q }
}
history_importer "other" {
  driver = "csv-reimages"
  config = { path = "/nonexistent" }
}
usage_source "node" {
  driver = "not-started-by-the-placer"
}
`, csv))
}

// newCSVImporter is the placer's history_import of the "csv" block of
// csvPlugins, on an in-memory store, at the test's now.
func newCSVImporter(t *testing.T, lookback string) (*historyImporter, *history.Store, *Metrics) {
	t.Helper()
	cfg := config.Default()
	cfg.PluginConfig = csvPlugins(t)
	cfg.HistoryImport = &config.HistoryImportConfig{Importer: "csv"}
	cfg.HistoryImport.Lookback = lookback
	s, err := cfg.Decode()
	if err != nil {
		t.Fatal(err)
	}
	store, metrics := history.NewStore(kv.NewMem(), ""), NewMetrics()
	h, err := newHistoryImporter(s.HistoryImport, store, metrics, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.plugins.Close)
	h.now = func() time.Time { return now.Add(30 * time.Second) } // mid-slot: the range ends at the slot's start
	return h, store, metrics
}

// TestHistoryImportPullWritesTheRange: one pull through the built-in
// csv-long importer writes [now - lookback, now) of every tenant, slot for
// slot, and nothing outside it; the plugin manager's metrics are in the
// placer's registry.
func TestHistoryImportPullWritesTheRange(t *testing.T) {
	h, store, metrics := newCSVImporter(t, "3h")
	ctx := context.Background()
	if err := h.pull(ctx); err != nil {
		t.Fatal(err)
	}
	from, to := now.Add(-3*time.Hour), now
	got, err := store.Series(ctx, history.TenantID{Environment: "search", Function: "frontend"}, now.Add(-24*time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	written := 0
	for i, v := range got.Values {
		at := got.Start.Add(time.Duration(i) * history.Slot)
		inRange := !at.Before(from) && at.Before(to)
		want := float64(int(at.Sub(now.Add(-24*time.Hour))/history.Slot) % 100)
		if inRange && v != want || !inRange && !math.IsNaN(v) {
			t.Fatalf("slot %s: %v (in range %v, want %v)", at, v, inRange, want)
		}
		if inRange {
			written++
		}
	}
	if written != 90 {
		t.Fatalf("%d slots written, want 3h of them", written)
	}
	if ts, _ := store.Tenants(ctx); len(ts) != 2 {
		t.Fatalf("tenants %+v", ts)
	}
	if v := gathered(t, metrics, "harvest_placer_history_import_last_success_timestamp_seconds", ""); v != float64(now.Unix()) {
		t.Fatalf("last success %v", v)
	}
	if gathered(t, metrics, "harvest_plugin_up", "plugin=csv") != 1 || gathered(t, metrics, "harvest_placer_history_import_failures_total", "") != 0 {
		t.Fatal("want harvest_plugin_up{plugin=csv} 1 and no failures")
	}
}

// flakyImporter sends half a stream and fails while failing is set, and the
// whole range otherwise.
type flakyImporter struct {
	failing atomic.Bool
	calls   atomic.Int32
}

func (f *flakyImporter) SetConfig(map[string]string) error { return nil }
func (f *flakyImporter) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "flaky", Type: base.PluginTypeHistoryImporter}, nil
}
func (f *flakyImporter) Import(_ context.Context, r historyimporter.Range, _ []string, emit func(historyimporter.Record) error) error {
	f.calls.Add(1)
	n := int(r.End.Sub(r.Start) / history.Slot)
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = 42
	}
	if err := emit(historyimporter.Record{Series: &historyimporter.SeriesChunk{Tenant: "search/frontend", Node: "a", Start: r.Start, StepSeconds: 120, Values: vals}}); err != nil {
		return err
	}
	if f.failing.Load() {
		return errors.New("history importer: stream broken after 1 records: plugin exited")
	}
	return emit(historyimporter.Record{Reimage: &historyimporter.Reimage{Tenant: "search/frontend", Node: "a", Time: r.Start}})
}

// TestHistoryImportFailureWritesNothingAndIsRetried: a pull whose stream
// breaks writes nothing and counts a failure; the loop pulls again at the
// next interval, and that pull writes.
func TestHistoryImportFailureWritesNothingAndIsRetried(t *testing.T) {
	kv := kv.NewMem()
	store, metrics := history.NewStore(kv, ""), NewMetrics()
	imp := &flakyImporter{}
	imp.failing.Store(true)
	h := &historyImporter{name: "flaky", importer: imp, store: store, interval: 50 * time.Millisecond, lookback: time.Hour,
		now: func() time.Time { return now }, log: hclog.NewNullLogger(), metrics: metrics}
	ctx := context.Background()
	if err := h.pull(ctx); err == nil || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("pull: %v", err)
	}
	if pairs, _ := kv.List(ctx, ""); len(pairs) != 0 || gathered(t, metrics, "harvest_placer_history_import_failures_total", "") != 1 {
		t.Fatalf("after a failed pull: %d keys, failures %v", len(pairs), gathered(t, metrics, "harvest_placer_history_import_failures_total", ""))
	}

	stop := startImporter(h) // first pull now: fails again
	deadline := time.Now().Add(10 * time.Second)
	for imp.calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	imp.failing.Store(false) // the next interval's pull succeeds
	for gathered(t, metrics, "harvest_placer_history_import_last_success_timestamp_seconds", "") == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if f := gathered(t, metrics, "harvest_placer_history_import_failures_total", ""); f < 2 {
		t.Fatalf("failures %v after two failed pulls", f)
	}
	s, err := store.Series(ctx, history.TenantID{Environment: "search", Function: "frontend"}, now.Add(-time.Hour), now)
	if err != nil || s.Observed() != 30 {
		t.Fatalf("after the retry: %d slots observed, %v", s.Observed(), err)
	}
	if evs, _ := store.Reimages(ctx, history.TenantID{Environment: "search", Function: "frontend"}); len(evs) != 1 {
		t.Fatalf("reimages %+v", evs)
	}
	calls := imp.calls.Load()
	time.Sleep(120 * time.Millisecond)
	if imp.calls.Load() != calls {
		t.Fatal("the loop pulled after stop")
	}
}

// fakePrometheus answers /api/v1/query_range as Prometheus does: node-a at
// 20% and node-b at 40% at every step of the window.
func fakePrometheus(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query_range" || r.ParseForm() != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
	end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
	step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
	type stream struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	var result []stream
	for node, cpu := range map[string]string{"node-a": "20", "node-b": "40"} {
		s := stream{Metric: map[string]string{"instance": node}, Values: [][2]any{}}
		for ts := start; ts <= end && step > 0; ts += step {
			s.Values = append(s.Values, [2]any{ts, cpu})
		}
		result = append(result, s)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
}

// TestHistoryImportThroughTheExternalPrometheusImporter runs the real
// harvest-import-prometheus binary over go-plugin through the placer's
// loop: the first pull writes the range, a SIGKILLed plugin is restarted by
// the manager and a later pull writes again, and stopping the loop leaves
// no plugin process.
func TestHistoryImportThroughTheExternalPrometheusImporter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the harvest-import-prometheus binary")
	}
	dir := t.TempDir()
	start := time.Now()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "harvest-import-prometheus"), "github.com/harvest-platform/harvest/cmd/harvest-import-prometheus")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	t.Logf("built the plugin in %s", time.Since(start).Round(time.Millisecond))
	prom := httptest.NewServer(http.HandlerFunc(fakePrometheus))
	defer prom.Close()
	plugins := writeFile(t, dir, "plugins.hcl", fmt.Sprintf(`plugin_dir = %q
history_importer "prom" {
  driver              = "harvest-import-prometheus"
  config              = { address = %q, "query.search/frontend" = "cpu" }
  restart_backoff     = "100ms"
  restart_backoff_max = "200ms"
}
`, dir, prom.URL))
	cfg, err := config.Load(writeFile(t, dir, "placer.hcl", fmt.Sprintf(`plugin_config = %q
history_import {
  importer = "prom"
  interval = "200ms"
  lookback = "1h"
}
`, plugins)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Decode()
	if err != nil {
		t.Fatal(err)
	}
	store, metrics := history.NewStore(kv.NewMem(), ""), NewMetrics()
	h, err := newHistoryImporter(s.HistoryImport, store, metrics, hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: os.Stderr}))
	if err != nil {
		t.Fatal(err)
	}
	var pulls atomic.Int64
	h.now = func() time.Time { return now.Add(time.Duration(pulls.Add(1)) * history.Slot) } // a slot later each pull
	last := func() float64 {
		return gathered(t, metrics, "harvest_placer_history_import_last_success_timestamp_seconds", "")
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s (failures %v)", what, gathered(t, metrics, "harvest_placer_history_import_failures_total", ""))
			}
		}
	}

	started := time.Now()
	stop := startImporter(h)
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	waitFor("the first pull", func() bool { return last() > 0 })
	t.Logf("first pull written %s after start", time.Since(started).Round(time.Millisecond))
	frontend := history.TenantID{Environment: "search", Function: "frontend"}
	first := time.Unix(int64(last()), 0).UTC()
	got, err := store.Series(context.Background(), frontend, first.Add(-time.Hour), first)
	if err != nil {
		t.Fatal(err)
	}
	if got.Until(first).Last(time.Hour).Observed() != 30 {
		t.Fatalf("%d slots of the hour before %s written", got.Until(first).Last(time.Hour).Observed(), first)
	}
	for i, v := range got.Until(first).Last(time.Hour).Values {
		if v != 30 {
			t.Fatalf("slot %d: %v, want the nodes' mean 30", i, v)
		}
	}
	if tenants, _ := store.Tenants(context.Background()); len(tenants) != 1 || strings.Join(tenants[0].Nodes, ",") != "node-a,node-b" {
		t.Fatalf("tenants %+v", tenants)
	}
	if gathered(t, metrics, "harvest_plugin_up", "plugin=prom") != 1 {
		t.Fatal("harvest_plugin_up{plugin=prom} is not 1")
	}

	pid := h.plugins.States()[0].Pid
	if pid == 0 {
		t.Fatal("no plugin process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed, before := time.Now(), last()
	waitFor("a restart and a pull after it", func() bool {
		return gathered(t, metrics, "harvest_plugin_restarts_total", "plugin=prom") >= 1 && last() > before && h.plugins.States()[0].Pid != pid
	})
	t.Logf("pulling again %s after the SIGKILL (failed pulls meanwhile: %v)", time.Since(killed).Round(time.Millisecond),
		gathered(t, metrics, "harvest_placer_history_import_failures_total", ""))

	pid = h.plugins.States()[0].Pid
	stop()
	stop = nil
	waitFor("the plugin process to be gone", func() bool { return syscall.Kill(pid, 0) == syscall.ESRCH })
}

// startImporter runs the importer's loop as the placer does; stop ends it
// and closes the importer's plugin.
func startImporter(h *historyImporter) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	wait := runLoops(ctx, hclog.NewNullLogger(), []loop{h.loop()})
	return func() { cancel(); wait(); h.close() }
}
