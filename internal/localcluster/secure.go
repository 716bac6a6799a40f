package localcluster

// The secure mode (Options.Secure, `harvest-dev dev-cluster up -secure`):
// Consul and Nomad as production runs them. TLS on every agent's HTTP API
// and RPC (agents verify each other's certificates and the servers'
// names: server.dc1.consul, server.global.nomad), gossip encryption, and
// ACLs in default-deny: Consul with an initial management token, Nomad
// bootstrapped with one; every agent and Harvest's driver with a token of its
// own from the policies Harvest ships (jobs/acl); Nomad workload identities
// accepted by Consul (a JWT auth method on Nomad's JWKS, binding rules for
// services and for tasks). The HTTP APIs want a valid token, not a client
// certificate (Nomad's verify_https_client and Consul's
// https.verify_incoming are off, as in Nomad's and Consul's own production
// guides), so that Consul can fetch Nomad's JWKS; agent-to-agent RPC is
// mutual TLS.

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-uuid"

	"github.com/harvest-platform/harvest/internal/pki"
)

// Secure is what a secure cluster's clients need: the CA, a client
// certificate, a certificate Harvest's own daemons may serve with
// (localhost, 127.0.0.1), and the management tokens. cluster.json holds it
// (mode 0600).
type Secure struct {
	TLSDir string `json:"tls_dir"`
	CAFile string `json:"ca_file"`
	// CLICert and CLIKey: a client certificate (agents' RPC wants one; the
	// HTTP APIs accept it but do not require it).
	CLICert string `json:"cli_cert"`
	CLIKey  string `json:"cli_key"`
	// HarvestCert and HarvestKey: for the placer's and the blob front's
	// listeners (localhost, 127.0.0.1).
	HarvestCert string `json:"harvest_cert"`
	HarvestKey  string `json:"harvest_key"`
	// NomadToken and ConsulToken are the management tokens.
	NomadToken  string `json:"nomad_token"`
	ConsulToken string `json:"consul_token"`
	// ConsulAgentToken is the Consul client agents' token; NomadConsulToken
	// the Nomad agents' Consul token; DriverConsulToken the harvest
	// drivers' (driver.consul policy).
	ConsulAgentToken  string `json:"consul_agent_token"`
	NomadConsulToken  string `json:"nomad_consul_token"`
	DriverConsulToken string `json:"driver_consul_token"`
	GossipKey         string `json:"gossip_key"`

	certs map[string][2]string // agent kind -> cert, key
}

// certValidity is long enough for any test or demo.
const certValidity = 30 * 24 * time.Hour

// newSecure makes the CA, the certificates and the tokens under
// runDir/tls.
func newSecure(runDir string) (*Secure, error) {
	dir := filepath.Join(runDir, "tls")
	// harvested tasks (nobody) may read the CA, not the keys (0600)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ca, err := pki.NewCA("Harvest local cluster CA", certValidity)
	if err != nil {
		return nil, err
	}
	s := &Secure{TLSDir: dir, certs: map[string][2]string{}}
	if s.CAFile, err = ca.WriteCA(dir); err != nil {
		return nil, err
	}
	local := []net.IP{net.ParseIP("127.0.0.1")}
	for _, c := range []struct {
		name string
		dns  []string
	}{
		{"consul-server", []string{"server.dc1.consul", "localhost"}},
		{"consul-client", []string{"client.dc1.consul", "localhost"}},
		{"nomad-server", []string{"server.global.nomad", "localhost"}},
		{"nomad-client", []string{"client.global.nomad", "localhost"}},
		{"cli", []string{"cli.dc1.consul", "cli.global.nomad"}},
		{"harvest", []string{"localhost"}},
	} {
		leaf, err := ca.Issue(c.name, c.dns, local, certValidity)
		if err != nil {
			return nil, err
		}
		cert, key, err := leaf.Write(dir, c.name)
		if err != nil {
			return nil, err
		}
		s.certs[c.name] = [2]string{cert, key}
	}
	s.CLICert, s.CLIKey = s.certs["cli"][0], s.certs["cli"][1]
	s.HarvestCert, s.HarvestKey = s.certs["harvest"][0], s.certs["harvest"][1]
	// Consul and Nomad want tokens' secrets as UUIDs
	for _, t := range []*string{&s.NomadToken, &s.ConsulToken, &s.ConsulAgentToken, &s.NomadConsulToken, &s.DriverConsulToken} {
		if *t, err = uuid.GenerateUUID(); err != nil {
			return nil, err
		}
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	s.GossipKey = base64.StdEncoding.EncodeToString(key)
	return s, nil
}

// cert is an agent kind's certificate and key.
func (s *Secure) cert(kind string) (string, string) {
	if c, ok := s.certs[kind]; ok {
		return c[0], c[1]
	}
	dir := s.TLSDir // a loaded state: the files are where newSecure put them
	return filepath.Join(dir, kind+".pem"), filepath.Join(dir, kind+"-key.pem")
}

// consulSecureConfig is the TLS, ACL and gossip part of a Consul agent's
// config (kind: consul-server or consul-client); agentToken is the agent's
// own token.
func (s *Secure) consulSecureConfig(kind, agentToken string) string {
	cert, key := s.cert(kind)
	initial := ""
	if kind == "consul-server" {
		initial = fmt.Sprintf("    initial_management = %q\n", s.ConsulToken)
	}
	return fmt.Sprintf(`
encrypt = %q

tls {
  defaults {
    ca_file         = %q
    cert_file       = %q
    key_file        = %q
    verify_incoming = true
    verify_outgoing = true
  }
  internal_rpc {
    verify_server_hostname = true
  }
  https {
    verify_incoming = false
  }
}

acl {
  enabled                  = true
  default_policy           = "deny"
  enable_token_persistence = false
  tokens {
%s    agent = %q
  }
}
`, s.GossipKey, s.CAFile, cert, key, initial, agentToken)
}

// nomadSecureConfig is the TLS and ACL part of a Nomad agent's config (kind:
// nomad-server or nomad-client).
func (s *Secure) nomadSecureConfig(kind string) string {
	cert, key := s.cert(kind)
	return fmt.Sprintf(`
tls {
  http                   = true
  rpc                    = true
  ca_file                = %q
  cert_file              = %q
  key_file               = %q
  verify_server_hostname = true
  verify_https_client    = false
}

acl {
  enabled = true
}
`, s.CAFile, cert, key)
}

// nomadConsulTLS is the TLS part of a Nomad agent's consul block.
func (s *Secure) nomadConsulTLS(kind string) string {
	cert, key := s.cert(kind)
	return fmt.Sprintf(`  ssl       = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
  token     = %q
`, s.CAFile, cert, key, s.NomadConsulToken)
}
