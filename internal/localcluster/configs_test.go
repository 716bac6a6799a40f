package localcluster

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl"
)

func decodeHCL(t *testing.T, src string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := hcl.Decode(&out, src); err != nil {
		t.Fatalf("config does not parse: %v\n%s", err, src)
	}
	return out
}

func TestNomadClientConfigCarriesMetaPluginAndIsolation(t *testing.T) {
	b := Block{Base: 15100}
	src := nomadClientConfig(nomadClientSpec{
		name: "client-2", dataDir: `/tmp/run "quoted"/data`, pluginDir: "/tmp/run/plugins",
		cgroupParent: "/harvest-15100-client-2", server: "127.0.0.1:15141", consulAddr: "127.0.0.1:15014",
		meta:          map[string]string{"harvest_tenant": "ads/indexer", "harvest_environment": "ads", "harvest_rack": "rack-2"},
		harvestDriver: true,
	}, b.nomadClient(1))
	cfg := decodeHCL(t, src)
	if cfg["data_dir"] != `/tmp/run "quoted"/data` {
		t.Errorf("data_dir = %v: quoting broke", cfg["data_dir"])
	}
	client := cfg["client"].([]map[string]any)[0]
	meta := client["meta"].([]map[string]any)[0]
	if meta["harvest_tenant"] != "ads/indexer" || meta["harvest_rack"] != "rack-2" {
		t.Errorf("meta = %v", meta)
	}
	if client["cgroup_parent"] != "/harvest-15100-client-2" {
		t.Errorf("cgroup_parent = %v", client["cgroup_parent"])
	}
	opts := client["options"].([]map[string]any)[0]
	if !strings.Contains(opts["fingerprint.denylist"].(string), "env_aws") {
		t.Errorf("cloud fingerprinters not denied: %v", opts)
	}
	plugins := cfg["plugin"].([]map[string]any)
	names := map[string]bool{}
	for _, p := range plugins {
		for k := range p {
			names[k] = true
		}
	}
	if !names["harvest-driver"] || !names["raw_exec"] {
		t.Errorf("plugins = %v", names)
	}
	if !strings.Contains(src, `http = "127.0.0.1:15153"`) {
		t.Errorf("advertise block missing the client's own http port:\n%s", src)
	}
}

func TestConsulConfigsParseAndJoinTheServer(t *testing.T) {
	b := Block{Base: 15200}
	server := decodeHCL(t, consulServerConfig("consul-server", b.consulServer()))
	if server["disable_update_check"] != true {
		t.Errorf("server may phone home: %v", server["disable_update_check"])
	}
	client := decodeHCL(t, consulClientConfig("client-1", "/tmp/d", b.consulClient(0), "127.0.0.1:15201"))
	join := client["retry_join"].([]any)
	if len(join) != 1 || join[0] != "127.0.0.1:15201" {
		t.Errorf("retry_join = %v", join)
	}
	if client["server"] != false {
		t.Errorf("client agent configured as server")
	}
	decodeHCL(t, nomadServerConfig("nomad-server", "/tmp/n", b.nomadServer(), "127.0.0.1:15200"))
}
