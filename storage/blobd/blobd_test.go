package blobd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, repair string) string {
	t.Helper()
	var nodes strings.Builder
	for _, id := range []string{"a", "b", "c"} {
		nodes.WriteString(`node "` + id + `" {
  endpoint = "127.0.0.1:9000"
  access_key = "k"
  secret_key = "s"
  tenant = "env-` + id + `/fn"
  environment = "env-` + id + `"
  capacity_mb = 100
}
`)
	}
	path := filepath.Join(t.TempDir(), "blob.hcl")
	src := "listen = \"127.0.0.1:9100\"\naccess_key = \"x\"\nsecret_key = \"y\"\nconsul {\n  address = \"127.0.0.1:8500\"\n}\n" + repair + nodes.String()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigDefaultsAndRepairBlock(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if c.Replicas != 3 || c.health.interval != 5*time.Second || c.health.lostAfter != 10*time.Minute || c.repair.PerServerPerHour != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = LoadConfig(writeConfig(t, "repair {\n  per_server_per_hour = 120\n  interval = \"5s\"\n  scan_interval = \"30m\"\n  lost_after = \"1m\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.repair.PerServerPerHour != 120 || c.repair.Interval != 5*time.Second || c.repair.ScanInterval != 30*time.Minute || c.health.lostAfter != time.Minute {
		t.Fatalf("repair block: %+v", c.repair)
	}
}

func TestConfigRefusesBadDurationsAndTooFewNodes(t *testing.T) {
	_, err := LoadConfig(writeConfig(t, "repair {\n  lost_after = \"soon\"\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "repair.lost_after") {
		t.Fatalf("bad duration: %v", err)
	}
	_, err = LoadConfig(writeConfig(t, "replicas = 4\n"))
	if err == nil || !strings.Contains(err.Error(), "fewer than replicas = 4") {
		t.Fatalf("too few nodes: %v", err)
	}
}

// TestConfigValidatesTheNewBlocks: timeouts, limits, gc, scrub and safe
// mode get their defaults; a grace shorter than twice the commit window, a
// share outside (0, 1] or more requests than connections are refused.
func TestConfigValidatesTheNewBlocks(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if c.timeouts.Node != 10*time.Second || c.timeouts.Consul != 5*time.Second || c.limits.MaxRequests != 256 ||
		c.gc.Grace != time.Hour || c.minFreeMB != 1024 || c.busyExpiry != 2*time.Minute {
		t.Fatalf("defaults: %+v %+v %+v", c.timeouts, c.limits, c.gc)
	}
	c, err = LoadConfig(writeConfig(t, "timeouts {\n  consul = \"1s\"\n}\ngc {\n  grace = \"12s\"\n}\nscrub {\n  mb_per_second = 2\n}\nsafe_mode {\n  share = 1\n}\n"))
	if err != nil || c.gc.Grace != 12*time.Second || c.scrub.BytesPerSecond != 2<<20 || c.safeMode.Share != 1 {
		t.Fatalf("set: %+v %+v %v", c.gc, c.scrub, err)
	}
	for src, want := range map[string]string{
		"gc {\n  grace = \"50s\"\n}\n":                              "twice the commit window",
		"safe_mode {\n  share = 1.5\n}\n":                           "safe_mode.share",
		"limits {\n  max_requests = 10\n  max_connections = 5\n}\n": "exceeds limits.max_connections",
		"timeouts {\n  node = \"-1s\"\n}\n":                         "timeouts.node",
		"min_free_mb = -1\n":                                        "min_free_mb",
	} {
		if _, err := LoadConfig(writeConfig(t, src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error about %s", src, err, want)
		}
	}
}

// TestConfigMaintainerLock: the maintainer lock's session TTL and lock
// delay default to Consul's 15 s, can be set, and a TTL Consul would refuse
// is refused at load.
func TestConfigMaintainerLock(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, ""))
	if err != nil || c.maintainer.sessionTTL != 15*time.Second || c.maintainer.lockDelay != 15*time.Second {
		t.Fatalf("defaults: %+v %v", c.maintainer, err)
	}
	c, err = LoadConfig(writeConfig(t, "maintainer {\n  session_ttl = \"30s\"\n  lock_delay = \"2s\"\n}\n"))
	if err != nil || c.maintainer.sessionTTL != 30*time.Second || c.maintainer.lockDelay != 2*time.Second {
		t.Fatalf("set: %+v %v", c.maintainer, err)
	}
	for src, want := range map[string]string{
		"maintainer {\n  session_ttl = \"5s\"\n}\n":   "Consul takes 10s to 24h",
		"maintainer {\n  lock_delay = \"never\"\n}\n": "maintainer.lock_delay",
	} {
		if _, err := LoadConfig(writeConfig(t, src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error about %s", src, err, want)
		}
	}
}

// TestConfigPlacement: hour_candidates defaults to 5, busy_percent to 67
// and steer_first and pick_jointly to true; 0 candidates turns the steering off; negative
// counts or a percentage beyond 100 are refused.
func TestConfigPlacement(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, ""))
	if err != nil || c.placement != (placement{HourCandidates: 5, BusyPercent: 67, SteerFirst: true, PickJointly: true}) {
		t.Fatalf("defaults: %+v %v", c.placement, err)
	}
	c, err = LoadConfig(writeConfig(t, "placement {\n  hour_candidates = 0\n  busy_percent = 80\n  steer_first = false\n  pick_jointly = false\n}\n"))
	if err != nil || c.placement != (placement{HourCandidates: 0, BusyPercent: 80}) {
		t.Fatalf("set: %+v %v", c.placement, err)
	}
	if _, err := LoadConfig(writeConfig(t, "placement {\n  hour_candidates = 20\n  pick_jointly = false\n}\n")); err != nil {
		t.Fatalf("20 candidates one pick at a time: %v", err)
	}
	for _, src := range []string{"placement {\n  hour_candidates = -1\n}\n", "placement {\n  busy_percent = 120\n}\n",
		"placement {\n  hour_candidates = 11\n}\n"} { // more than grid.MaxJointCandidates with pick_jointly
		if _, err := LoadConfig(writeConfig(t, src)); err == nil || !strings.Contains(err.Error(), "placement") {
			t.Errorf("%q: %v, want an error about placement", src, err)
		}
	}
}

// TestOnlyTheNodeListIsReloaded: a reload that changes only the nodes is
// taken quietly; one that changes another setting is told apart.
func TestOnlyTheNodeListIsReloaded(t *testing.T) {
	a, err := LoadConfig(writeConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LoadConfig(writeConfig(t, ""))
	b.Nodes = b.Nodes[:2]
	b.Nodes[0].Endpoint = "127.0.0.1:9999"
	if otherSettingsDiffer(a, b) {
		t.Fatal("a change of the node list counted as another setting's")
	}
	c, _ := LoadConfig(writeConfig(t, "repair {\n  lost_after = \"1m\"\n}\n"))
	if !otherSettingsDiffer(a, c) {
		t.Fatal("a changed lost_after went unnoticed")
	}
}
