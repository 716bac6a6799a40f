package localcluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/harvest-platform/harvest/placer/config"
)

// The placer config a local cluster writes is one the placer loads and
// decodes, with the cluster's addresses and what the caller asked; on a
// secure cluster both listeners serve TLS and the placer trusts the CA.
func TestPlacerHCLLoadsAsThePlacersConfig(t *testing.T) {
	for _, secure := range []bool{false, true} {
		dir := t.TempDir()
		s := &State{NomadServer: Agent{HTTPAddr: "127.0.0.1:4646"}, ConsulServer: Agent{HTTPAddr: "127.0.0.1:8500"}}
		if secure {
			var err error
			if s.Secure, err = newSecure(dir); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "placer.hcl")
		hcl := s.PlacerHCL(PlacerConfig{HTTPAddr: "127.0.0.1:7000", ProxyAddr: "127.0.0.1:7001", Prefix: "hv/", Token: "placer-token-0123456789",
			NomadToken: "n-tok", ConsulToken: "c-tok", Proxy: `room_placement = "device"`, Extra: `memory_limit = "900MiB"`})
		if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(path)
		if err != nil {
			t.Fatalf("secure %v: %v\n%s", secure, err, hcl)
		}
		if _, err := c.Decode(); err != nil {
			t.Fatalf("secure %v: %v\n%s", secure, err, hcl)
		}
		if c.LogLevel != "INFO" || c.HTTPAddr != "127.0.0.1:7000" || c.Proxy.Address != "127.0.0.1:7001" ||
			c.Proxy.RoomPlacement != "device" || c.Consul.Prefix != "hv/" || c.MemoryLimit != "900MiB" ||
			len(c.ACL.Tokens) != 1 || c.ACL.Tokens[0] != "placer-token-0123456789" || c.Nomad.Address != s.NomadAddr() || c.Consul.Address != s.ConsulAddr() {
			t.Errorf("secure %v: loaded %+v from\n%s", secure, c, hcl)
		}
		tlsOn := c.TLS.CertFile != "" && c.Proxy.TLSCertFile != "" && c.Nomad.CAFile != "" && c.Nomad.Token == "n-tok" && c.Consul.Token == "c-tok"
		if tlsOn != secure {
			t.Errorf("secure %v: TLS and the placer's tokens set = %v:\n%s", secure, tlsOn, hcl)
		}
	}
}
