package driver

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// TestRealPluginProcess builds harvest-driver and talks to it as a Nomad
// client does: a separate process over go-plugin's gRPC, with Nomad's
// handshake. (Running tasks through the real process inside Nomad is the
// acceptance tests' part.)
func TestRealPluginProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin binary")
	}
	bin := filepath.Join(t.TempDir(), "harvest-driver")
	build := exec.Command("go", "build", "-o", bin, "../cmd/harvest-driver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "client", Level: hclog.Warn})
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  base.Handshake,
		Plugins:          map[string]plugin.Plugin{base.PluginTypeDriver: drivers.NewDriverPlugin(nil, logger)},
		Cmd:              exec.Command(bin),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(base.PluginTypeDriver)
	if err != nil {
		t.Fatal(err)
	}
	d := raw.(drivers.DriverPlugin)
	info, err := d.PluginInfo()
	if err != nil || info.Name != Name || info.Type != base.PluginTypeDriver {
		t.Fatalf("plugin info %+v %v", info, err)
	}
	var cfg []byte
	if err := base.MsgPackEncode(&cfg, &Config{Enabled: true, ReserveCPU: "1", ReserveMemory: "10%", UsageSource: "proc", HarvestCgroup: "none"}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetConfig(&base.Config{PluginConfig: cfg, AgentConfig: &base.AgentConfig{Driver: &base.ClientDriverConfig{Topology: topology}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fp, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-fp:
		if f.Health != drivers.HealthStateHealthy || f.Attributes["driver.harvest.reserve_cores"] == nil || f.Attributes["driver.harvest.capacity_memory"] == nil {
			t.Fatalf("fingerprint %+v", f)
		}
	case <-ctx.Done():
		t.Fatal("no fingerprint from the plugin process")
	}
	caps, err := d.Capabilities()
	if err != nil || !caps.SendSignals || !caps.Exec {
		t.Fatalf("capabilities %+v %v", caps, err)
	}
	// a bad config is refused by the process with the reason
	if err := base.MsgPackEncode(&cfg, &Config{Enabled: true, UsageSource: "cgroup", HarvestCgroup: "none"}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetConfig(&base.Config{PluginConfig: cfg}); err == nil {
		t.Fatal("cgroup source without a cgroup or capacity was accepted")
	}

	// With a usage plugin, the driver process runs it, and takes it down
	// when the client stops the driver (Nomad never calls Shutdown itself).
	e := newExporter(t, 0.5)
	if err := base.MsgPackEncode(&cfg, &Config{Enabled: true, ReserveCPU: "1", ReserveMemory: "0", UsageSource: "proc", HarvestCgroup: "none",
		PluginConfig: pluginFile(t, e), UsagePlugin: "node"}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetConfig(&base.Config{PluginConfig: cfg, AgentConfig: &base.AgentConfig{Driver: &base.ClientDriverConfig{Topology: topology}}}); err != nil {
		t.Fatal(err)
	}
	fps, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	untilFingerprint(t, fps, "up")
	usageBin := filepath.Join(usagePluginDir(t), "harvest-usage-prometheus")
	if out, err := exec.Command("pgrep", "-f", usageBin).Output(); err != nil || len(strings.Fields(string(out))) != 1 {
		t.Fatalf("pgrep -f %s with the driver running: %q (%v), want one process", usageBin, out, err)
	}
	client.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := exec.Command("pgrep", "-f", usageBin).Output()
		if err != nil && len(out) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the usage plugin outlived the driver process: pgrep %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
