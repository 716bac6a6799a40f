//go:build acceptance

package acceptance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// driverAttr is a harvest driver attribute of a client as Nomad's server
// has it.
func driverAttr(t *testing.T, node, key string) string {
	t.Helper()
	n, _, err := nomadClient(t).Nodes().Info(nodeID(t, node), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := n.Drivers["harvest"]; d != nil {
		return d.Attributes[key]
	}
	return ""
}

// usagePluginPIDs are the running harvest-usage-prometheus processes, by
// the pid of their parent (a client's harvest driver).
func usagePluginPIDs(t *testing.T) map[int]int {
	t.Helper()
	want := filepath.Join(cluster.RunDir, "usage-plugins", "harvest-usage-prometheus")
	out := map[int]int{}
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range exes {
		if target, err := os.Readlink(exe); err != nil || target != want {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(exe)))
		out[parentPID(pid)] = pid
	}
	return out
}

// TestDriversReadThePrimaryThroughTheExternalUsageSource: every client's
// harvest driver samples its primary tenant through harvest-usage-prometheus
// (a separate process over go-plugin) from the cluster's metrics exporter;
// killing one driver's plugin switches that driver to its built-in cgroup
// source (logged) until the plugin is restarted, and it is read again.
func TestDriversReadThePrimaryThroughTheExternalUsageSource(t *testing.T) {
	for _, c := range cluster.NomadClients {
		if got := driverAttr(t, c.Name, "driver.harvest.usage_plugin"); got != "exporter" {
			t.Fatalf("%s: driver.harvest.usage_plugin = %q, want exporter", c.Name, got)
		}
		if got := driverAttr(t, c.Name, "driver.harvest.usage_plugin_state"); got != "up" {
			t.Fatalf("%s: usage_plugin_state = %q, want up", c.Name, got)
		}
	}
	pids := usagePluginPIDs(t)
	if len(pids) != len(cluster.NomadClients) {
		t.Fatalf("%d usage plugin processes, want one per client (%d): %v", len(pids), len(cluster.NomadClients), pids)
	}

	// kill one plugin: its driver falls back, the manager restarts it
	victim := cluster.NomadClients[0]
	logBefore, _ := os.ReadFile(victim.Log)
	var old int
	for _, pid := range pids {
		if processInTree(pid, victim.PID) {
			old = pid
		}
	}
	if old == 0 {
		t.Fatalf("no usage plugin under %s (nomad pid %d): %v", victim.Name, victim.PID, pids)
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var restarted int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		for _, pid := range usagePluginPIDs(t) {
			if pid != old && processInTree(pid, victim.PID) {
				restarted = pid
			}
		}
		if restarted != 0 && driverAttr(t, victim.Name, "driver.harvest.usage_plugin_state") == "up" &&
			hasMetric(t, victim.DriverMetrics, "harvest_plugin_restarts_total") {
			break
		}
	}
	if restarted == 0 {
		t.Fatalf("the usage plugin of %s was not restarted after it was killed", victim.Name)
	}
	if st := driverAttr(t, victim.Name, "driver.harvest.usage_plugin_state"); st != "up" {
		t.Fatalf("%s: state %q after the restart, want up", victim.Name, st)
	}
	logAfter, _ := os.ReadFile(victim.Log)
	added := string(logAfter[min(len(logBefore), len(logAfter)):])
	if !strings.Contains(strings.ToLower(added), "fallback") {
		t.Fatalf("%s's log says nothing of the fallback after the kill:\n%s", victim.Name, tail(added, 40))
	}
	restarts := driverMetric(t, victim.DriverMetrics, "harvest_plugin_restarts_total", "exporter")
	failures := driverMetric(t, victim.DriverMetrics, "harvest_plugin_failures_total", "exporter")
	if restarts < 1 || failures < 1 {
		t.Fatalf("%s's driver metrics: restarts_total %v, failures_total %v; want at least 1 each", victim.Name, restarts, failures)
	}
	if up := driverMetric(t, victim.DriverMetrics, "harvest_plugin_up", "exporter"); up != 1 {
		t.Fatalf("%s: harvest_plugin_up %v after the restart", victim.Name, up)
	}
	t.Logf("%s: plugin pid %d killed, restarted as %d; the driver fell back and came back", victim.Name, old, restarted)
}

// processInTree reports whether pid descends from root.
func processInTree(pid, root int) bool {
	for p := pid; p > 1; p = parentPID(p) {
		if p == root {
			return true
		}
	}
	return false
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return fmt.Sprint(strings.Join(l, "\n"))
}

// driverMetric sums a metric's series for one plugin from a driver's
// /metrics.
func driverMetric(t *testing.T, addr, name, plugin string) float64 {
	t.Helper()
	return series(t, addr, name, map[string]string{"plugin": plugin})
}

// hasMetric says whether a driver's /metrics has a series of name yet (a
// counter vector shows none until its first increment: the new plugin
// process can be seen before its restart is counted).
func hasMetric(t *testing.T, addr, name string) bool {
	t.Helper()
	return scrape(t, addr).Has(name)
}
