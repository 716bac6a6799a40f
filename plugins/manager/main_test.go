package manager

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// pluginDir holds the test plugin binary, built once for the package.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harvest-plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir = dir
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "testplugin"),
		"github.com/harvest-platform/harvest/plugins/internal/testplugin").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the test plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// metricValue reads one series from a registry (0 when it is absent).
// (Not observability/metricset: the plugin SDK imports nothing of Harvest
// outside plugins/, tests included; scripts/check-plugins.sh.)
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stateOf returns the named plugin's state.
func stateOf(m *Manager, name string) State {
	for _, s := range m.States() {
		if s.Name == name {
			return s
		}
	}
	return State{}
}
