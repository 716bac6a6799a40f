package manager

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

func newManager(t *testing.T, src string, reg *prometheus.Registry, b Builtins, onState func(State)) *Manager {
	t.Helper()
	cfg, err := ParseConfig([]byte(`plugin_dir = "`+pluginDir+`"`+"\n"+src), "test.hcl")
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg, b, Options{Logger: hclog.New(&hclog.LoggerOptions{Output: hclog.DefaultOutput, Level: hclog.Info}),
		Registerer: reg, OnState: onState})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func collect(ctx context.Context, imp historyimporter.Importer) ([]historyimporter.Record, error) {
	var recs []historyimporter.Record
	r := historyimporter.Range{Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	err := imp.Import(ctx, r, []string{"search/frontend"}, func(rec historyimporter.Record) error {
		recs = append(recs, rec)
		return nil
	})
	return recs, err
}

// A plugin that dies mid-stream: the import fails after the records that
// arrived (not a short success), the plugin is restarted, and the next
// import is whole.
func TestImportCrashMidStreamIsAnErrorAndRestarts(t *testing.T) {
	reg := prometheus.NewRegistry()
	once := filepath.Join(t.TempDir(), "crashed")
	m := newManager(t, `history_importer "crashy" {
  driver = "testplugin"
  config = { mode = "crash", after = "3", records = "5", once_file = "`+once+`" }
  restart_backoff = "50ms"
  restart_backoff_max = "500ms"
}`, reg, Builtins{}, nil)
	imp, err := m.HistoryImporter("crashy")
	if err != nil {
		t.Fatal(err)
	}
	pid := stateOf(m, "crashy").Pid

	recs, err := collect(context.Background(), imp)
	if err == nil {
		t.Fatalf("a stream cut by a crash after %d records returned no error", len(recs))
	}
	if len(recs) != 3 || status.Code(err) != codes.Unavailable {
		t.Fatalf("got %d records and %v (code %s), want 3 and Unavailable", len(recs), err, status.Code(err))
	}
	waitFor(t, "the restart", func() bool { s := stateOf(m, "crashy"); return s.Up && s.Restarts == 1 })
	if s := stateOf(m, "crashy"); s.Pid == pid || s.Pid == 0 {
		t.Fatalf("restarted plugin has pid %d, the crashed one had %d", s.Pid, pid)
	}

	recs, err = collect(context.Background(), imp)
	if err != nil || len(recs) != 6 {
		t.Fatalf("after the restart: %d records, %v; want 6 (5 chunks and a reimage)", len(recs), err)
	}
	if c := recs[2].Series; c == nil || c.Tenant != "search/frontend" || c.Node != "node-2" || c.StepSeconds != 120 || c.Values[1] != 2.5 {
		t.Fatalf("third record: %+v", recs[2].Series)
	}
	if r := recs[5].Reimage; r == nil || r.Node != "node-0" {
		t.Fatalf("last record: %+v", recs[5])
	}
	if v := metricValue(t, reg, "harvest_plugin_restarts_total", map[string]string{"plugin": "crashy"}); v != 1 {
		t.Fatalf("restarts_total = %v, want 1", v)
	}
	if v := metricValue(t, reg, "harvest_plugin_failures_total", map[string]string{"plugin": "crashy", "kind": KindCrash}); v != 1 {
		t.Fatalf("failures_total{kind=crash} = %v, want 1", v)
	}
}

// A plugin that stops answering: the call fails at its deadline, the process
// is killed and a new one answers.
func TestHungUsageSourceHitsDeadlineAndIsReplaced(t *testing.T) {
	reg := prometheus.NewRegistry()
	once := filepath.Join(t.TempDir(), "hung")
	m := newManager(t, `usage_source "hung" {
  driver = "testplugin"
  config = { mode = "hang", after = "1", once_file = "`+once+`" }
  call_timeout = "400ms"
  restart_backoff = "50ms"
}`, reg, Builtins{}, nil)
	src, _ := m.UsageSource("hung")
	if _, err := src.Sample(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := stateOf(m, "hung").Pid

	start := time.Now()
	_, err := src.Sample(context.Background())
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
		t.Fatalf("hung Sample returned %v after %s, want DeadlineExceeded after ~400ms", err, took)
	}
	if _, err := src.Sample(context.Background()); !errors.Is(err, ErrPluginDown) {
		t.Fatalf("Sample while down: %v, want ErrPluginDown", err)
	}
	waitFor(t, "the restart", func() bool { return stateOf(m, "hung").Up })
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the hung process %d is still there (kill 0: %v)", pid, err)
	}
	u, err := src.Sample(context.Background())
	if err != nil || u.PrimaryCPUCores != 1.5 {
		t.Fatalf("after the restart: %+v, %v", u, err)
	}
	if v := metricValue(t, reg, "harvest_plugin_failures_total", map[string]string{"plugin": "hung", "kind": KindHang}); v != 1 {
		t.Fatalf("failures_total{kind=hang} = %v, want 1", v)
	}
}
