package driver

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins/drivers"
	dtestutil "github.com/hashicorp/nomad/plugins/drivers/testutils"

	"github.com/harvest-platform/harvest/driver/guard"
)

// The real harvest-usage-prometheus, built once for the package into
// pluginBuildDir (removed by TestMain).
var (
	pluginBuild    sync.Once
	pluginBuildDir string
	pluginBuildErr error
)

func usagePluginDir(t *testing.T) string {
	t.Helper()
	pluginBuild.Do(func() {
		if pluginBuildDir, pluginBuildErr = os.MkdirTemp("", "harvest-driver-plugins"); pluginBuildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(pluginBuildDir, "harvest-usage-prometheus"), "../cmd/harvest-usage-prometheus").CombinedOutput()
		if err != nil {
			pluginBuildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if pluginBuildErr != nil {
		t.Fatal(pluginBuildErr)
	}
	return pluginBuildDir
}

// exporter serves node_exporter's text for a 4-CPU host and a cgroup
// exporter's for the primary tenant (container_*{id="/primary"}), whose CPU
// counter grows at rate cores and whose memory is 3 GiB. While hang is set
// it answers nothing until the request is given up.
type exporter struct {
	*httptest.Server
	hang atomic.Bool
	nan  atomic.Bool // the primary's CPU counter reads NaN
	mu   sync.Mutex
	at   time.Time
	cpu  float64 // the primary's CPU seconds at at
	rate float64
}

func newExporter(t *testing.T, rate float64) *exporter {
	e := &exporter{at: time.Now(), cpu: 1000, rate: rate}
	t0 := time.Now()
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for e.hang.Load() {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		el := time.Since(t0).Seconds()
		var b strings.Builder
		b.WriteString("# TYPE node_cpu_seconds_total counter\n")
		for cpu := range 4 {
			for mode, share := range map[string]float64{"idle": 0.5, "system": 0.2, "user": 0.3} {
				fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"%s\"} %.6f\n", cpu, mode, 1e5+share*el)
			}
		}
		b.WriteString("# TYPE node_memory_MemTotal_bytes gauge\nnode_memory_MemTotal_bytes 1.7179869184e+10\n")
		b.WriteString("# TYPE node_memory_MemAvailable_bytes gauge\nnode_memory_MemAvailable_bytes 1.073741824e+10\n")
		b.WriteString("# TYPE container_cpu_usage_seconds_total counter\n")
		// cAdvisor stamps its container series with when it read them: the
		// plugin rates them over those stamps, whatever the scrape's delays.
		now := time.Now()
		if e.nan.Load() {
			fmt.Fprintf(&b, "container_cpu_usage_seconds_total{cpu=\"total\",id=\"/primary\"} NaN %d\n", now.UnixMilli())
		} else {
			fmt.Fprintf(&b, "container_cpu_usage_seconds_total{cpu=\"total\",id=\"/primary\"} %.6f %d\n", e.counterAt(now), now.UnixMilli())
		}
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total{cpu=\"total\",id=\"/harvest/task\"} %.6f %d\n", 50+el, now.UnixMilli())
		b.WriteString("# TYPE container_memory_working_set_bytes gauge\ncontainer_memory_working_set_bytes{id=\"/primary\"} 3.221225472e+09\n")
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(func() { e.hang.Store(false); e.Close() })
	return e
}

func (e *exporter) counter() float64 { return e.counterAt(time.Now()) }

// counterAt is the primary's CPU seconds at now, to the millisecond now is
// stamped with.
func (e *exporter) counterAt(now time.Time) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cpu + e.rate*time.UnixMilli(now.UnixMilli()).Sub(e.at).Seconds()
}

func (e *exporter) setRate(cores float64) {
	c := e.counter()
	e.mu.Lock()
	e.cpu, e.at, e.rate = c, time.Now(), cores
	e.mu.Unlock()
}

// pluginFile writes a plugin config whose "node" block runs the plugin in
// primary mode against e, with a capacity of 4 cores and 4 GiB.
func pluginFile(t *testing.T, e *exporter) string {
	path := filepath.Join(t.TempDir(), "plugins.hcl")
	src := fmt.Sprintf(`plugin_dir = %q
usage_source "node" {
  driver = "harvest-usage-prometheus"
  config = {
    url                   = %q
    first_interval        = "100ms"
    primary_cpu_metric    = "container_cpu_usage_seconds_total"
    primary_memory_metric = "container_memory_working_set_bytes"
    primary_labels        = "id=/primary"
    capacity_cpu_cores    = "4"
    capacity_memory_bytes = "4294967296"
  }
  call_timeout        = "1s"
  restart_backoff     = "300ms"
  restart_backoff_max = "1s"
}
history_importer "unused" { driver = "not-run-by-the-driver" }
`, usagePluginDir(t), e.URL)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// newPluginHarness runs the driver with the plugin as its usage source and
// the built-in proc source (this host) as the fallback; a 1-core reserve.
func newPluginHarness(t *testing.T, e *exporter) (*dtestutil.DriverHarness, *Driver) {
	t.Helper()
	d := New(hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Info}))
	t.Cleanup(d.Shutdown)
	cfg := Config{Enabled: true, ReserveCPU: "1", ReserveMemory: "0", GuardInterval: "1h", SpikeCheck: "0", AdmitWindow: "0s",
		UsageSource: "proc", PluginConfig: pluginFile(t, e), UsagePlugin: "node", HarvestCgroup: "none", EvictGrace: "0s"}
	return newHarnessWith(t, d, cfg), d
}

func attr(fp *drivers.Fingerprint, key string) string {
	if a := fp.Attributes[key]; a != nil {
		return a.GoString()
	}
	return ""
}

// measure runs one guard pass and returns what it measured.
func measure(d *Driver) guard.Resources {
	d.guardOnce(time.Now())
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.primary
}

// untilFingerprint reads fps until one has the plugin in state, within 3 s
// (the periodic fingerprint is 30 s away: a prompt one was woken).
func untilFingerprint(t *testing.T, fps <-chan *drivers.Fingerprint, state string) {
	t.Helper()
	deadline := time.After(3 * time.Second)
	for {
		select {
		case fp := <-fps:
			if attr(fp, "driver.harvest.usage_plugin_state") == state {
				return
			}
		case <-deadline:
			t.Fatalf("no fingerprint with usage_plugin_state %s within 3 s", state)
		}
	}
}

func pluginPid(t *testing.T, d *Driver) int {
	t.Helper()
	for _, s := range d.plugin.m.States() {
		if s.Name == "node" {
			return s.Pid
		}
	}
	t.Fatal("no state for the node plugin")
	return 0
}

func metric(t *testing.T, d *Driver, name, labels string) float64 {
	t.Helper()
	fams, err := d.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			if f.GetName() == name && strings.Join(ls, ",") == labels {
				if m.GetCounter() != nil {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// hostUsedMiB is MemTotal - MemAvailable now, what the proc built-in reads.
func hostUsedMiB(t *testing.T) float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb := map[string]float64{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var k string
		var v float64
		if n, _ := fmt.Sscanf(sc.Text(), "%s %f", &k, &v); n == 2 {
			kb[strings.TrimSuffix(k, ":")] = v
		}
	}
	return (kb["MemTotal"] - kb["MemAvailable"]) / 1024
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }
