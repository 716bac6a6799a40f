//go:build acceptance

package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

// fakePrometheus answers /api/v1/query_range as Prometheus does: one
// series per node of a constant CPU percent (40 on node-a, 60 on node-b).
func fakePrometheus() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query_range" || r.ParseForm() != nil {
			http.NotFound(w, r)
			return
		}
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		var result []map[string]any
		for node, cpu := range map[string]string{"node-a": "40", "node-b": "60"} {
			var values [][2]any
			for ts := start; ts <= end; ts += step {
				values = append(values, [2]any{ts, cpu})
			}
			result = append(result, map[string]any{"metric": map[string]string{"instance": node}, "values": values})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
	})
}

// TestPlacerPullsHistoryThroughAnExternalImporter: a real placer with a
// history_import block runs harvest-import-prometheus (a separate process
// over go-plugin) against a Prometheus API and writes the tenant's history
// into the real Consul: each slot the mean of the two nodes (50%).
func TestPlacerPullsHistoryThroughAnExternalImporter(t *testing.T) {
	prom := httptest.NewServer(fakePrometheus())
	defer prom.Close()
	pluginDir := t.TempDir()
	if err := installCopy(filepath.Join(bin, "harvest-import-prometheus"), filepath.Join(pluginDir, "harvest-import-prometheus")); err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(t.TempDir(), "plugins.hcl")
	if err := os.WriteFile(plugins, []byte(fmt.Sprintf(`plugin_dir = %q
history_importer "prom" {
  driver = "harvest-import-prometheus"
  config = {
    address                = %q
    "query.search/frontend" = "100 * avg by (instance) (rate(node_cpu_seconds_total{mode!=\"idle\"}[2m]))"
  }
}
`, pluginDir, prom.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := "harvest-import-acc/"
	_, _, stop := startPlacerWith(t, prefix, "", fmt.Sprintf(`plugin_config = %q
history_import {
  importer = "prom"
  interval = "1h"
  lookback = "1h"
}`, plugins))
	store := history.NewStore(kv.NewConsul(consulAPI(t, cluster.ConsulAddr())), prefix)
	t.Cleanup(func() { _, _ = consulAPI(t, cluster.ConsulAddr()).KV().DeleteTree(prefix, nil) })
	id := history.TenantID{Environment: "search", Function: "frontend"}
	now := time.Now().UTC()
	imported := 0
	err := eventually(30*time.Second, func() error {
		s, err := store.Series(context.Background(), id, now.Add(-time.Hour), now)
		if err != nil {
			return err
		}
		n := 0
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				n++
				if v != 50 {
					return fmt.Errorf("a slot holds %v, want 50 (the mean of 40 and 60)", v)
				}
			}
		}
		if n < 25 {
			return fmt.Errorf("%d slots imported so far", n)
		}
		imported = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range exes {
		if target, _ := os.Readlink(exe); target == filepath.Join(pluginDir, "harvest-import-prometheus") {
			t.Fatalf("the importer plugin (%s) still runs after the placer stopped", exe)
		}
	}
	t.Logf("placer imported %d slots (each 50%%) of search/frontend through harvest-import-prometheus", imported)
}

// installCopy copies an executable.
func installCopy(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}
