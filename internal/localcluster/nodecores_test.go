package localcluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goldenSpec is a harvested client as Up writes it by default.
func goldenSpec() nomadClientSpec {
	return nomadClientSpec{
		name: "client-2", dataDir: "/run/nomad-client-2/data", pluginDir: "/run/plugins",
		cgroupParent: "/harvest-15100-client-2", server: "127.0.0.1:15141", consulAddr: "127.0.0.1:15014",
		meta:          map[string]string{"harvest_tenant": "ads/indexer", "harvest_environment": "ads", "harvest_rack": "rack-2"},
		harvestDriver: true, primaryCgroup: "/harvest-15100-client-2-primary", usagePluginConfig: "/run/nomad-client-2/usage-plugins.hcl",
		driverMetrics: "127.0.0.1:15180", harvestCgroup: "/harvest-15100-client-2-harvested",
	}
}

// TestDefaultConfigsAreUnchanged: without NodeCores, ReserveCores and
// Replay a client's configs are byte for byte what they were before those
// options (testdata holds them as written then).
func TestDefaultConfigsAreUnchanged(t *testing.T) {
	var o Options
	spec := goldenSpec()
	spec.cores, spec.reserveCPU = o.NodeCores, o.reserveCPU()
	total, err := o.totalCompute()
	if err != nil || total != 0 {
		t.Fatalf("default cpu_total_compute %d %v, want none", total, err)
	}
	spec.totalCompute = total
	for file, got := range map[string]string{
		"client-default.hcl":        nomadClientConfig(spec, Block{Base: 15100}.nomadClient(1)),
		"usage-plugins-default.hcl": usagePluginConfig("/run/usage-plugins", "harvest-usage-prometheus", "http://127.0.0.1:15090/metrics", "/harvest-15100-client-2-primary", o.NodeCores),
	} {
		want, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s changed:\n%s", file, got)
		}
	}
}

// TestNodeCoresReachNomadTheDriverAndThePlugin: a client of 12 cores on
// this host is 12 of its cores' MHz to Nomad, 12 cores to the driver and
// to the usage plugin, with the reserve asked.
func TestNodeCoresReachNomadTheDriverAndThePlugin(t *testing.T) {
	o := Options{NodeCores: 12, ReserveCores: 4}
	total, err := o.totalCompute()
	if err != nil {
		t.Fatal(err)
	}
	mhz, err := hostCoreMHz()
	if err != nil {
		t.Fatal(err)
	}
	if want := 12 * mhz; float64(total) < want-0.5 || float64(total) > want+0.5 {
		t.Fatalf("cpu_total_compute %d, want 12 x %v MHz", total, mhz)
	}
	spec := goldenSpec()
	spec.cores, spec.reserveCPU, spec.totalCompute = o.NodeCores, o.reserveCPU(), total
	cfg := decodeHCL(t, nomadClientConfig(spec, Block{Base: 15100}.nomadClient(1)))
	client := cfg["client"].([]map[string]any)[0]
	if client["cpu_total_compute"] != total {
		t.Errorf("cpu_total_compute = %v, want %d", client["cpu_total_compute"], total)
	}
	var driver map[string]any
	for _, p := range cfg["plugin"].([]map[string]any) {
		if d, ok := p["harvest-driver"]; ok {
			driver = d.([]map[string]any)[0]["config"].([]map[string]any)[0]
		}
	}
	if driver["capacity_cpu"] != 12 || driver["reserve_cpu"] != "4" {
		t.Errorf("driver capacity_cpu %v, reserve_cpu %v", driver["capacity_cpu"], driver["reserve_cpu"])
	}
	plugin := usagePluginConfig("/p", "harvest-usage-prometheus", "http://x/metrics", "/cg", o.NodeCores)
	decodeHCL(t, plugin)
	if !strings.Contains(plugin, `capacity_cpu_cores    = "12"`) {
		t.Errorf("usage plugin config:\n%s", plugin)
	}
	if (&Options{ReserveCores: 0.25}).reserveCPU() != "0.25" {
		t.Error("a fractional reserve is not written as asked")
	}
}

const replayCSV = `tenant,timestamp,cpu_percent
search/frontend,2026-01-01T00:00:00Z,50
ads/indexer,2026-01-01T00:00:00Z,10
mail/store,2026-01-01T00:00:00Z,90
`

// fakeBinaries makes the files setDefaults looks for.
func fakeBinaries(t *testing.T) (stack, tool string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"nomad", "consul", "minio", "harvest-driver", "harvest-usage-prometheus", "harvest-dev"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, dir
}

func replayOptions(t *testing.T) Options {
	t.Helper()
	bin, _ := fakeBinaries(t)
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte(replayCSV), 0o600); err != nil {
		t.Fatal(err)
	}
	return Options{RunDir: t.TempDir(), StackBin: bin, DriverBinary: filepath.Join(bin, "harvest-driver"),
		UsagePlugin: filepath.Join(bin, "harvest-usage-prometheus"), DevTool: filepath.Join(bin, "harvest-dev"),
		NodeCores: 12, ClaimDir: t.TempDir(),
		Replay: &ReplayOptions{File: trace, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Speedup: 30}}
}

// TestReplayMapsEachPrimaryToItsTenant: the exporter replays each client's
// primary cgroup as its tenant, and cluster.json records what builds the
// same trace.
func TestReplayMapsEachPrimaryToItsTenant(t *testing.T) {
	o := replayOptions(t)
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	s := &State{RunDir: o.RunDir}
	b := Block{Base: 15100}
	began := time.Date(2030, 1, 1, 0, 0, 0, 123456789, time.UTC)
	args := strings.Join(replayArgs(&o, s, b, began), " ")
	for _, want := range []string{"-replay " + o.Replay.File, "-replay-start 2026-01-01T00:00:00Z", "-replay-began 2030-01-01T00:00:00.123456789Z",
		"-speedup 30", "-node-cores 12", "-tenant /harvest-15100-client-1-primary=search/frontend",
		"-tenant /harvest-15100-client-3-primary=mail/store"} {
		if !strings.Contains(args, want) {
			t.Errorf("exporter args %s: no %s", args, want)
		}
	}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	r := loaded.Replay
	if r == nil || !r.Began.Equal(began) || r.NodeCores != 12 || r.Tenants["/harvest-15100-client-2-primary"] != "ads/indexer" {
		t.Fatalf("cluster.json replay %+v", r)
	}
	tr, err := r.Trace()
	if err != nil {
		t.Fatal(err)
	}
	// mail/store at 90% of 12 cores for 10 s
	if got := tr.CPUSeconds("mail/store", began.Add(10*time.Second), float64(r.NodeCores)); got < 108-1e-9 || got > 108+1e-9 {
		t.Errorf("CPUSeconds %v, want 108", got)
	}
	// a replay that begins at a time of the caller's
	o.Replay.Began = began.Add(time.Minute)
	args = strings.Join(replayArgs(&o, s, b, began), " ")
	if !strings.Contains(args, "-replay-began 2030-01-01T00:01:00.123456789Z") || !s.Replay.Began.Equal(o.Replay.Began) {
		t.Errorf("with Began: args %s, state %s", args, s.Replay.Began)
	}
	data, _ := json.Marshal(&State{})
	if strings.Contains(string(data), "replay") {
		t.Errorf("a cluster without a replay records one: %s", data)
	}
}

func TestReplayOptionsAreChecked(t *testing.T) {
	for name, c := range map[string]struct {
		change func(*Options)
		want   string
	}{
		"tenant without samples": {func(o *Options) { o.Nodes = DefaultNodes(4) }, "maps/tiles"},
		"bare":                   {func(o *Options) { o.Bare = true }, "bare"},
		"no exporter":            {func(o *Options) { o.UsagePlugin = "" }, "UsagePlugin"},
		"no start":               {func(o *Options) { o.Replay.Start = time.Time{} }, "Start"},
		"no file":                {func(o *Options) { o.Replay.File += ".none" }, "no such file"},
		"reserve over cores":     {func(o *Options) { o.NodeCores, o.ReserveCores = 2, 2 }, "reserve"},
	} {
		o := replayOptions(t)
		c.change(&o)
		if err := o.setDefaults(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	o := replayOptions(t)
	o.Replay.Speedup = 0
	if err := o.setDefaults(); err != nil || o.Replay.Speedup != 1 {
		t.Errorf("speedup 0: %v, %v", err, o.Replay.Speedup)
	}
}
