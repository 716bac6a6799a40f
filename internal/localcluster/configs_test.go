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
	server := decodeHCL(t, consulServerConfig("consul-server", b.consulServer(), nil))
	if server["disable_update_check"] != true {
		t.Errorf("server may phone home: %v", server["disable_update_check"])
	}
	client := decodeHCL(t, consulClientConfig("client-1", "/tmp/d", b.consulClient(0), "127.0.0.1:15201", nil))
	join := client["retry_join"].([]any)
	if len(join) != 1 || join[0] != "127.0.0.1:15201" {
		t.Errorf("retry_join = %v", join)
	}
	if client["server"] != false {
		t.Errorf("client agent configured as server")
	}
	decodeHCL(t, nomadServerConfig("nomad-server", "/tmp/n", b.nomadServer(), "127.0.0.1:15200", nil))
}

// TestSecureConfigsTurnOnTLSAndACLs: every agent of a secure cluster has
// TLS on its API and RPC, ACLs in default-deny, its own token, and the
// Nomad server hands out workload identities Consul accepts.
func TestSecureConfigsTurnOnTLSAndACLs(t *testing.T) {
	sec, err := newSecure(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := Block{Base: 15200}
	server := consulServerConfig("consul-server", b.consulServer(), sec)
	client := consulClientConfig("client-1", "/tmp/d", b.consulClient(0), "127.0.0.1:15201", sec)
	for name, src := range map[string]string{"consul server": server, "consul client": client} {
		cfg := decodeHCL(t, src)
		acl := cfg["acl"].([]map[string]any)[0]
		if acl["enabled"] != true || acl["default_policy"] != "deny" || cfg["encrypt"] != sec.GossipKey {
			t.Errorf("%s: acl %v, encrypt %v", name, acl, cfg["encrypt"])
		}
		if !strings.Contains(src, "http     = -1") || !strings.Contains(src, "verify_incoming = true") ||
			!strings.Contains(src, "verify_server_hostname = true") {
			t.Errorf("%s: plain HTTP or unverified RPC:\n%s", name, src)
		}
	}
	if !strings.Contains(server, sec.ConsulToken) || strings.Contains(client, sec.ConsulToken) || !strings.Contains(client, sec.ConsulAgentToken) {
		t.Error("the management token belongs to the server's config only; the client agent has its own")
	}
	nomad := nomadServerConfig("nomad-server", "/tmp/n", b.nomadServer(), "127.0.0.1:15200", sec)
	cfg := decodeHCL(t, nomad)
	tls := cfg["tls"].([]map[string]any)[0]
	if tls["http"] != true || tls["rpc"] != true || tls["verify_server_hostname"] != true || cfg["acl"].([]map[string]any)[0]["enabled"] != true {
		t.Errorf("nomad server tls %v acl %v", tls, cfg["acl"])
	}
	if !strings.Contains(nomad, "task_identity") || !strings.Contains(nomad, "service_identity") || !strings.Contains(nomad, sec.NomadConsulToken) {
		t.Errorf("nomad server's consul block:\n%s", nomad)
	}
	nc := nomadClientConfig(nomadClientSpec{name: "client-1", dataDir: "/tmp/c", pluginDir: "/tmp/p", server: "127.0.0.1:15241",
		consulAddr: "127.0.0.1:15210", meta: map[string]string{"harvest_tenant": "a/b"}, harvestDriver: true, secure: sec}, b.nomadClient(0))
	decodeHCL(t, nc)
	if !strings.Contains(nc, `consul_address      = "https://127.0.0.1:15210"`) || !strings.Contains(nc, sec.DriverConsulToken) ||
		strings.Contains(nc, "task_identity") {
		t.Errorf("nomad client config:\n%s", nc)
	}
}

// With the room device, the driver writes its room file and the
// harvest-room plugin reads the same one.
func TestTheRoomDeviceReadsTheDriversRoomFile(t *testing.T) {
	b := Block{Base: 15100}
	src := nomadClientConfig(nomadClientSpec{name: "client-1", dataDir: "/tmp/run/data", pluginDir: "/tmp/run/plugins",
		server: "127.0.0.1:15141", consulAddr: "127.0.0.1:15014", harvestDriver: true, roomFile: "/tmp/run/harvest-room.json"}, b.nomadClient(0))
	cfg := decodeHCL(t, src)
	files := map[string]any{}
	for _, p := range cfg["plugin"].([]map[string]any) {
		for name, body := range p {
			files[name] = body.([]map[string]any)[0]["config"].([]map[string]any)[0]["room_file"]
		}
	}
	if files["harvest-driver"] != "/tmp/run/harvest-room.json" || files["harvest-room"] != "/tmp/run/harvest-room.json" {
		t.Fatalf("room files %v: want the same file in the driver's and the device's config\n%s", files, src)
	}
	if o := (&Options{}); roomFileOf(o, "/x") != "" {
		t.Fatal("a cluster without the room device has a room file")
	}
}
