package manager

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// fixedSource is a built-in standing in for the driver's own /proc source.
type fixedSource struct {
	cpu   float64
	calls int
}

var _ usagesource.Source = (*fixedSource)(nil)

func (f *fixedSource) SetConfig(map[string]string) error { return nil }
func (f *fixedSource) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "fixed", Type: base.PluginTypeUsageSource}, nil
}
func (f *fixedSource) Sample(context.Context) (usagesource.Usage, error) {
	f.calls++
	return usagesource.Usage{HostMeasured: true, HostCPUCores: f.cpu}, nil
}

// syncBuffer is a log sink the plugin goroutines may write concurrently.
// (Not internal/syncbuf: the plugin SDK imports nothing of Harvest outside
// plugins/, tests included; scripts/check-plugins.sh.)
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// While the external source is down the built-in answers, and once it is
// restarted the external answers again; logs, state and metrics follow.
func TestFallbackServesBuiltinWhileExternalIsDown(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs syncBuffer
	var mu sync.Mutex
	var transitions []string
	once := filepath.Join(t.TempDir(), "crashed")
	cfg, err := ParseConfig([]byte(`plugin_dir = "`+pluginDir+`"
usage_source "node" {
  driver = "testplugin"
  config = { mode = "crash", after = "1", once_file = "`+once+`", cpu = "3.25" }
  restart_backoff = "300ms"
}
usage_source "proc" { driver = "proc" }
`), "test.hcl")
	if err != nil {
		t.Fatal(err)
	}
	builtin := &fixedSource{cpu: 0.25}
	m, err := New(cfg, Builtins{UsageSources: map[string]func(hclog.Logger) (usagesource.Source, error){
		"proc": func(hclog.Logger) (usagesource.Source, error) { return builtin, nil },
	}}, Options{
		Logger:     hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}),
		Registerer: reg,
		OnState: func(s State) {
			mu.Lock()
			defer mu.Unlock()
			if s.Name == "node" {
				transitions = append(transitions, map[bool]string{true: "up", false: "down"}[s.Up])
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fb, err := m.Fallback("node", "proc")
	if err != nil {
		t.Fatal(err)
	}
	sample := func(want float64, builtin bool) {
		t.Helper()
		u, err := fb.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := u.PrimaryCPUCores
		if u.HostMeasured {
			got = u.HostCPUCores
		}
		if got != want || fb.OnBuiltin() != builtin {
			t.Fatalf("sample %v (on built-in %v), want %v (%v)", got, fb.OnBuiltin(), want, builtin)
		}
	}
	sample(3.25, false) // the plugin
	sample(0.25, true)  // the plugin crashes in this call: the built-in answers it
	sample(0.25, true)  // down, restart pending
	if v := metricValue(t, reg, "harvest_plugin_up", map[string]string{"plugin": "node"}); v != 0 {
		t.Fatalf("harvest_plugin_up = %v while down", v)
	}
	if v := metricValue(t, reg, "harvest_plugin_fallback_active", map[string]string{"plugin": "node"}); v != 1 {
		t.Fatalf("harvest_plugin_fallback_active = %v while down", v)
	}
	waitFor(t, "the restart", func() bool { return stateOf(m, "node").Up })
	sample(3.25, false)
	if builtin.calls != 4 {
		t.Errorf("the built-in was sampled %d times in 4 Samples: it is not kept warm while the plugin answers", builtin.calls)
	}

	for name, want := range map[string]float64{"harvest_plugin_restarts_total": 1, "harvest_plugin_up": 1, "harvest_plugin_fallback_active": 0} {
		if v := metricValue(t, reg, name, map[string]string{"plugin": "node"}); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	if v := metricValue(t, reg, "harvest_plugin_failures_total", map[string]string{"plugin": "node", "kind": KindCrash}); v != 1 {
		t.Errorf("failures_total{kind=crash} = %v, want 1", v)
	}
	mu.Lock()
	if got := strings.Join(transitions, ","); got != "up,down,up" {
		t.Errorf("state transitions %s, want up,down,up", got)
	}
	mu.Unlock()
	out := logs.String()
	for _, want := range []string{"sampling from the built-in until it is back", "usage source is back", "plugin down: kind=crash", "plugin restarted"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
}

// A real plugin process whose samples say NaN cores answers, but its
// samples are not trusted: the built-in serves them, as for a crashed one.
func TestFallbackHandsANaNPluginOverToTheBuiltin(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg, err := ParseConfig([]byte(`plugin_dir = "`+pluginDir+`"
usage_source "node" {
  driver = "testplugin"
  config = { cpu = "NaN" }
}
usage_source "proc" { driver = "proc" }
`), "test.hcl")
	if err != nil {
		t.Fatal(err)
	}
	builtin := &fixedSource{cpu: 0.5}
	m, err := New(cfg, Builtins{UsageSources: map[string]func(hclog.Logger) (usagesource.Source, error){
		"proc": func(hclog.Logger) (usagesource.Source, error) { return builtin, nil },
	}}, Options{Logger: hclog.NewNullLogger(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fb, err := m.Fallback("node", "proc")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		u, err := fb.Sample(context.Background())
		if err != nil || !u.HostMeasured || u.HostCPUCores != 0.5 || !fb.OnBuiltin() {
			t.Fatalf("sample %+v %v (on built-in %v), want the built-in's 0.5 cores", u, err, fb.OnBuiltin())
		}
	}
	if v := metricValue(t, reg, "harvest_plugin_fallback_active", map[string]string{"plugin": "node"}); v != 1 {
		t.Fatalf("harvest_plugin_fallback_active = %v with a NaN plugin", v)
	}
	if !stateOf(m, "node").Up {
		t.Fatal("the plugin process itself should still be up")
	}
}

// scripted is a source answering what the test sets.
type scripted struct {
	mu  sync.Mutex
	u   usagesource.Usage
	err error
}

func (s *scripted) SetConfig(map[string]string) error { return nil }
func (s *scripted) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "scripted", Type: base.PluginTypeUsageSource}, nil
}
func (s *scripted) Sample(context.Context) (usagesource.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.u, s.err
}
func (s *scripted) set(u usagesource.Usage, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.u, s.err = u, err
}

// Stale, negative and infinite samples hand over as NaN does; when the
// external's samples are good again it serves again; when both fail the
// Sample fails.
func TestFallbackChecksEverySample(t *testing.T) {
	ext, bi := &scripted{}, &scripted{}
	fb := NewFallbackUsageSource(ext, bi, "ext", nil)
	fb.MaxAge = time.Second
	now := time.Now()
	bi.set(usagesource.Usage{Time: now, PrimaryCPUCores: 0.5}, nil)
	for _, bad := range []usagesource.Usage{
		{Time: now.Add(-2 * time.Second), PrimaryCPUCores: 1},
		{Time: now, PrimaryCPUCores: -1},
		{Time: now, HostMeasured: true, HostCPUCores: math.Inf(1)},
		{Time: now, CapacityCPUCores: math.NaN()},
	} {
		ext.set(bad, nil)
		u, err := fb.Sample(context.Background())
		if err != nil || u.PrimaryCPUCores != 0.5 || !fb.OnBuiltin() {
			t.Errorf("external sample %+v: got %+v %v, want the built-in's", bad, u, err)
		}
	}
	ext.set(usagesource.Usage{Time: time.Now(), PrimaryCPUCores: 1.5}, nil)
	if u, err := fb.Sample(context.Background()); err != nil || u.PrimaryCPUCores != 1.5 || fb.OnBuiltin() {
		t.Fatalf("good again: %+v %v", u, err)
	}
	ext.set(usagesource.Usage{}, errors.New("down"))
	bi.set(usagesource.Usage{Time: now, PrimaryCPUCores: math.NaN()}, nil)
	if _, err := fb.Sample(context.Background()); err == nil || !strings.Contains(err.Error(), "invalid sample") {
		t.Fatalf("both bad: %v", err)
	}
}
