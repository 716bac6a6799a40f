//go:build acceptance

package acceptance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/survival"
)

// harvestCLI runs one of Harvest's binaries and returns its output.
func harvestCLI(t *testing.T, binary string, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(bin, binary), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", binary, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startPlacer runs harvest-placer as a real process on a spare port of the
// cluster and stops it (SIGTERM, which must end it cleanly) at cleanup. It
// returns the API address and the admission proxy's address.
func startPlacer(t *testing.T) (string, string) {
	addr, proxyAddr, _ := startPlacerWith(t, "harvest/", "", "")
	return addr, proxyAddr
}

// startPlacerWith starts a placer keeping its state under a Consul KV
// prefix, with proxyExtra inside its proxy block and extra configuration
// (policy blocks) appended; it also returns a stop function the test may
// call before the cleanup.
func startPlacerWith(t *testing.T, prefix, proxyExtra, extra string) (string, string, func()) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(0))
	// a secure run: HTTPS on both listeners, and the placer's own tokens
	// (placer.nomad, placer.consul); Nomad tokens with the Harvest
	// capability are accepted besides the placer's own
	config := filepath.Join(t.TempDir(), "placer.hcl")
	hcl := cluster.PlacerHCL(localcluster.PlacerConfig{LogLevel: "DEBUG", HTTPAddr: addr,
		ProxyAddr: fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(1)), Prefix: prefix, Token: placerToken,
		NomadToken: tokens.placerNomad, ConsulToken: tokens.placerConsul, Proxy: proxyExtra, Extra: extra})
	if err := os.WriteFile(config, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath, stop := startDaemonStoppable(t, "harvest-placer", "agent", "-config", config)
	api := harvestScheme() + "://" + addr
	for i := 0; i < 100; i++ {
		if resp, err := harvestHTTP().Get(api + "/v1/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if cluster.Secure != nil {
					addr = api // callers pass it to harvestctl -placer-addr and placerAPI
				}
				return addr, fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(1)), stop
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("placer did not answer on %s (log %s)", addr, logPath)
	return "", "", nil
}

func flatSeries(level float64, start time.Time, days int, seed uint64) history.Series {
	rng := rand.New(rand.NewPCG(seed, 3))
	v := make([]float64, days*history.SlotsPerDay)
	for i := range v {
		v[i] = math.Max(0, level+rng.NormFloat64())
	}
	return history.Series{Start: start, Values: v}
}

// labelNodes imports history for the cluster's tenants with `harvestctl
// history import` (two similar constant tenants, a periodic one, one with
// two days only), starts the placer, refreshes the classes with `harvestctl
// classes refresh` and waits until every node carries its labels. It
// returns the labels by node and the placer's API and proxy addresses.
func labelNodes(t *testing.T) (map[string][2]string, string, string) {
	t.Helper()
	if len(cluster.NomadClients) < 4 {
		t.Fatalf("want 4 clients, have %d", len(cluster.NomadClients))
	}
	now := time.Now().UTC().Truncate(history.Slot)
	start := now.Add(-10 * 24 * time.Hour)
	series := map[history.TenantID]history.Series{
		tenantOf(t, 0): flatSeries(20, start, 10, 1), // two similar constant tenants: one class
		tenantOf(t, 1): flatSeries(22, start, 10, 2),
		tenantOf(t, 2): synth.PatternSeries(3, synth.Periodic, start, 10),
		tenantOf(t, 3): flatSeries(30, now.Add(-2*24*time.Hour), 2, 4), // too little history
	}
	importHistory(t, "harvest/", series)
	addr, proxyAddr := startPlacer(t)
	labels := refreshAndWaitForLabels(t, addr, func(l map[string][2]string) bool {
		n := cluster.NomadClients
		return l[n[0].Name][1] == "constant" && l[n[1].Name] == l[n[0].Name] && l[n[2].Name][1] == "periodic" &&
			l[n[3].Name][0] == "unclassified"
	})
	return labels, addr, proxyAddr
}

// tenantOf is client i's tenant.
func tenantOf(t *testing.T, i int) history.TenantID {
	id, err := history.ParseTenantID(cluster.NomadClients[i].Meta["harvest_tenant"])
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// importHistory writes series as a long CSV and imports it with harvestctl.
func importHistory(t *testing.T, prefix string, series map[history.TenantID]history.Series) {
	t.Helper()
	csvPath := filepath.Join(t.TempDir(), "history.csv")
	f, err := os.Create(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := csvfmt.WriteLong(f, series); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := harvestCLI(t, "harvestctl", "history", "import", "-format", "long", "-consul-addr", cluster.ConsulAddr(), "-prefix", prefix, csvPath)
	if !strings.Contains(out, fmt.Sprintf("imported %d tenants", len(series))) {
		t.Fatalf("import said: %s", out)
	}
}

// refreshAndWaitForLabels asks the placer to classify now and waits until
// every node carries a class label and the labels are as done wants (an
// earlier test's labels linger until the clients send their new meta).
func refreshAndWaitForLabels(t *testing.T, addr string, done func(map[string][2]string) bool) map[string][2]string {
	t.Helper()
	out := harvestCLI(t, "harvestctl", "classes", "refresh", "-placer-addr", addr)
	t.Logf("harvestctl classes refresh:\n%s", out)

	// Dynamic node meta reaches the node (and the scheduler) a few seconds
	// after it is applied.
	c := nomadClient(t)
	labels := map[string][2]string{}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		missing := 0
		for _, n := range cluster.NomadClients {
			node, _, err := c.Nodes().Info(nodeID(t, n.Name), nil)
			if err != nil {
				t.Fatal(err)
			}
			labels[n.Name] = [2]string{node.Meta["harvest_class"], node.Meta["harvest_pattern"]}
			if node.Meta["harvest_class"] == "" {
				missing++
			}
		}
		if missing == 0 && done(labels) {
			break
		}
	}
	return labels
}

// TestPlacerLabelsEveryNodeFromImportedHistory imports history for the
// cluster's tenants with `harvestctl history import`, runs the real placer,
// refreshes the classes with `harvestctl classes refresh`, and checks the
// labels on every node through Nomad's API, the survival figures the placer
// publishes for the constant class, and that a job constrained on a class
// lands only on that class's nodes.
func TestPlacerLabelsEveryNodeFromImportedHistory(t *testing.T) {
	labels, addr, _ := labelNodes(t)
	n := cluster.NomadClients
	if l := labels[n[0].Name]; l[1] != "constant" || l != labels[n[1].Name] {
		t.Errorf("constant tenants: %s=%v %s=%v, want one constant class", n[0].Name, l, n[1].Name, labels[n[1].Name])
	}
	if l := labels[n[2].Name]; l[1] != "periodic" || !strings.HasPrefix(l[0], "periodic-") {
		t.Errorf("%s labelled %v, want a periodic class", n[2].Name, l)
	}
	if l := labels[n[3].Name]; l != [2]string{"unclassified", "unclassified"} {
		t.Errorf("%s (2 days of history) labelled %v, want unclassified", n[3].Name, l)
	}
	shown := harvestCLI(t, "harvestctl", "classes", "-consul-addr", cluster.ConsulAddr())
	if !strings.Contains(shown, labels[n[0].Name][0]) || !strings.Contains(shown, "too little history") {
		t.Errorf("harvestctl classes shows:\n%s", shown)
	}
	checkSurvival(t, addr, labels[n[0].Name][0])

	// A job constrained on the constant class runs only on its two nodes.
	class := labels[n[0].Name][0]
	job := uniqueName("acc-class")
	purgeJob(t, job)
	path := writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  constraint {
    attribute = "${meta.harvest_class}"
    value     = %q
  }
  group "g" {
    count = 6
    task "work" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 50
        memory = 16
      }
    }
  }
}`, job, class))
	nomadCLI(t, "job", "run", "-detach", path)
	allocs := waitAllocs(t, job, 6, time.Minute, complete)
	for _, a := range allocs {
		if a.NodeName != n[0].Name && a.NodeName != n[1].Name {
			t.Errorf("allocation on %s, outside class %s (%s, %s)", a.NodeName, class, n[0].Name, n[1].Name)
		}
	}
}

// TestDriverSamplesReachTheTenantHistory: every client's harvest driver
// averages its primary tenant's CPU into 2-minute slots and appends them to
// the tenant history in Consul KV, registering itself as a node of the
// tenant. The first slot closes within two minutes of the cluster starting.
func TestDriverSamplesReachTheTenantHistory(t *testing.T) {
	c := consulAPI(t, cluster.ConsulAddr())
	store := history.NewStore(kv.NewConsul(c), "")
	node := cluster.NomadClients[len(cluster.NomadClients)-1]
	id, err := history.ParseTenantID(node.Meta["harvest_tenant"])
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		tenants, err := store.Tenants(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range tenants {
			if info.ID() == id && slices.Contains(info.Nodes, node.Name) {
				s, err := store.Series(context.Background(), id, time.Now().Add(-10*time.Minute), time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if s.Observed() == 0 {
					t.Fatalf("%s registered as a node of %s but no slot was written", node.Name, id)
				}
				return
			}
		}
	}
	t.Fatalf("no sample from %s's driver reached the history of %s", node.Name, id)
}

// checkSurvival reads /v1/classes and checks the class's survival figures:
// the published grid and the three job types at the default thresholds,
// each null (no replayed task decided it) or a probability, replayed on
// the 2-core server the class's two drivers report with their 0.5-core
// reserve and 0.25-core admission margin. On these clients a primary of
// any use rounds up to a whole core, which leaves no whole core beside the
// reserve, so the points are expected null here; the arithmetic itself is
// unit-tested in placer/agent/classes and placer/survival.
func checkSurvival(t *testing.T, addr, class string) {
	t.Helper()
	table := mustRead(t, placerAPI(addr).Classes)
	i := slices.IndexFunc(table.Classes, func(c api.Class) bool { return c.Name == class })
	if i < 0 {
		t.Fatalf("class %s not in /v1/classes: %+v", class, table)
	}
	c := table.Classes[i]
	t.Logf("%s: survival %+v by job type %+v server %+v %s", class, c.Survival, c.SurvivalByJobType, c.SurvivalServer, c.SurvivalUnavailable)
	if s := c.SurvivalServer; s == nil || s.Cores != 2 || s.Reserve != 0.5 || s.Margin != 0.25 || s.Nodes != 2 {
		t.Errorf("%s: survival server %+v, want the drivers' 2 cores, 0.5 reserve and 0.25 margin, from 2 nodes (%s)",
			class, s, c.SurvivalUnavailable)
	}
	known := func(probability *float64, tasks int) bool {
		if probability == nil {
			return tasks == 0
		}
		return *probability >= 0 && *probability <= 1
	}
	grid := survival.DefaultLengths()
	if len(c.Survival) != len(grid) {
		t.Fatalf("%s: %d survival points, want %d", class, len(c.Survival), len(grid))
	}
	for k, p := range c.Survival {
		if p.Length != grid[k] || !known(p.Probability, p.Tasks) {
			t.Errorf("%s: point %+v, want length %s and a probability in [0, 1] (null only without tasks)", class, p, grid[k])
		}
	}
	for typ, l := range map[string]time.Duration{"short": 173 * time.Second, "medium": 433 * time.Second, "long": 866 * time.Second} {
		if p, ok := c.SurvivalByJobType[typ]; !ok || p.Length != l || !known(p.Probability, 0) {
			t.Errorf("%s: %s jobs' survival %+v, want it at %s, null or in [0, 1]", class, typ, p, l)
		}
	}
	shown := harvestCLI(t, "harvestctl", "classes", "-survival", "-consul-addr", cluster.ConsulAddr())
	if !strings.Contains(shown, class) || !strings.Contains(shown, "SHORT 2m53s") {
		t.Errorf("harvestctl classes -survival shows:\n%s", shown)
	}
}
