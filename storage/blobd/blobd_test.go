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
	c, err = LoadConfig(writeConfig(t, "repair {\n  per_server_per_hour = 120\n  interval = \"5s\"\n  lost_after = \"1m\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.repair.PerServerPerHour != 120 || c.repair.Interval != 5*time.Second || c.health.lostAfter != time.Minute {
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
