package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/plugins/manager"
)

// pluginDir holds this command's binary, built once for the package: the
// tests run it as a real plugin process, through the plugin manager.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harvest-usage-prometheus-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir = dir
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "harvest-usage-prometheus"), ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// nodeExporter serves node_exporter's text format for a 4-CPU, 16 GiB host
// whose counters grow in real time: the host busy on 2 cores, the primary
// tenant's cgroup on 0.5 and a harvested task's on 1 (which primary_labels
// must leave out).
func nodeExporter(t *testing.T) *httptest.Server {
	t0 := time.Now().Add(-time.Hour)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		el := time.Since(t0).Seconds()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		var b strings.Builder
		b.WriteString("# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n# TYPE node_cpu_seconds_total counter\n")
		for cpu := range 4 {
			for mode, share := range map[string]float64{"idle": 0.45, "iowait": 0.05, "system": 0.15, "user": 0.35} {
				fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"%s\"} %.6f\n", cpu, mode, 1e5+share*el)
			}
		}
		b.WriteString("# HELP node_memory_MemTotal_bytes Memory information field MemTotal_bytes.\n# TYPE node_memory_MemTotal_bytes gauge\n")
		b.WriteString("node_memory_MemTotal_bytes 1.7179869184e+10\n")
		b.WriteString("# HELP node_memory_MemAvailable_bytes Memory information field MemAvailable_bytes.\n# TYPE node_memory_MemAvailable_bytes gauge\n")
		b.WriteString("node_memory_MemAvailable_bytes 1.073741824e+10\n")
		b.WriteString("# TYPE container_cpu_usage_seconds_total counter\n")
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total{cpu=\"total\",id=\"/primary\"} %.6f\n", 500+0.5*el)
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total{cpu=\"total\",id=\"/harvest/task-1\"} %.6f\n", 900+1.0*el)
		b.WriteString("# TYPE container_memory_working_set_bytes gauge\n")
		b.WriteString("container_memory_working_set_bytes{id=\"/primary\"} 3.221225472e+09\n")
		b.WriteString("container_memory_working_set_bytes{id=\"/harvest/task-1\"} 1.073741824e+09\n")
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func load(t *testing.T, config string) *manager.Manager {
	t.Helper()
	cfg, err := manager.ParseConfig([]byte(fmt.Sprintf(`plugin_dir = %q
usage_source "node" {
  driver = "harvest-usage-prometheus"
  config = { %s }
  call_timeout = "5s"
}`, pluginDir, config)), "test.hcl")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manager.New(cfg, manager.Builtins{}, manager.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func near(got, want float64) bool { return math.Abs(got-want) < 0.15 }

func TestSampleHostOverGoPlugin(t *testing.T) {
	srv := nodeExporter(t)
	src, _ := load(t, fmt.Sprintf(`url = %q, first_interval = "300ms"`, srv.URL)).UsageSource("node")
	for i := range 2 { // the first Sample scrapes twice; the second rates against the first's
		if i == 1 {
			time.Sleep(300 * time.Millisecond)
		}
		u, err := src.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !u.HostMeasured || u.CapacityCPUCores != 4 || u.CapacityMemoryBytes != 16<<30 || u.HostMemoryBytes != 6<<30 ||
			!near(u.HostCPUCores, 2) || u.PrimaryCPUCores != 0 || time.Since(u.Time) > 5*time.Second {
			t.Fatalf("sample %d: %+v; want host-measured, 4 cores, 16 GiB, 6 GiB used, ~2 cores busy", i, u)
		}
	}
}

func TestSamplePrimaryCgroupOverGoPlugin(t *testing.T) {
	srv := nodeExporter(t)
	src, _ := load(t, fmt.Sprintf(`url = %q, first_interval = "300ms", primary_cpu_metric = "container_cpu_usage_seconds_total",
    primary_memory_metric = "container_memory_working_set_bytes", primary_labels = "id=/primary", capacity_cpu_cores = "3"`, srv.URL)).UsageSource("node")
	u, err := src.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if u.HostMeasured || !near(u.PrimaryCPUCores, 0.5) || u.PrimaryMemoryBytes != 3<<30 || u.CapacityCPUCores != 3 || !near(u.HostCPUCores, 2) {
		t.Fatalf("%+v; want the primary alone: ~0.5 cores, 3 GiB; capacity overridden to 3", u)
	}
}

// A bad endpoint is the plugin's own error: reported, not a crash, and the
// plugin stays up; a config without url never starts.
func TestSampleErrors(t *testing.T) {
	var fail atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "# TYPE up gauge\nup 1")
	}))
	defer srv.Close()
	m := load(t, fmt.Sprintf(`url = %q`, srv.URL))
	src, _ := m.UsageSource("node")
	if _, err := src.Sample(context.Background()); err == nil || !strings.Contains(err.Error(), "no node_cpu_seconds_total") {
		t.Fatalf("got %v", err)
	}
	fail.Store(true)
	if _, err := src.Sample(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("got %v", err)
	}
	if s := m.States()[0]; !s.Up || s.Restarts != 0 {
		t.Fatalf("state after the plugin's own errors: %+v", s)
	}

	m = load(t, `primary_labels = "id=/primary"`)
	src, _ = m.UsageSource("node")
	if _, err := src.Sample(context.Background()); !errors.Is(err, manager.ErrPluginDown) || !strings.Contains(err.Error(), "url") {
		t.Fatalf("without url: %v", err)
	}
}
