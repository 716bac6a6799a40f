package localcluster

import (
	"fmt"
	"strings"
)

// PlacerConfig is what a harvest-placer agent started beside a local
// cluster is told besides the cluster's own addresses (the acceptance
// tests' placers and the testbed's).
type PlacerConfig struct {
	LogLevel  string // default INFO
	HTTPAddr  string // the placer's API
	ProxyAddr string // the admission proxy
	Prefix    string // Consul KV prefix
	Token     string // the acl block's token (the API's callers)
	// NomadToken and ConsulToken are the placer's own tokens on a secure
	// cluster (State.Secure set): with them the placer serves HTTPS on
	// both listeners with the cluster's Harvest certificate and trusts its
	// CA.
	NomadToken, ConsulToken string
	Proxy                   string // HCL inside the proxy block
	Extra                   string // HCL at the top level
}

// PlacerHCL is c as a placer config file for this cluster.
func (s *State) PlacerHCL(c PlacerConfig) string {
	nomadExtra, consulExtra, tlsBlock, proxy := "", "", "", []string{fmt.Sprintf("address = %q", c.ProxyAddr)}
	if sec := s.Secure; sec != nil {
		nomadExtra = fmt.Sprintf("\n  ca_file = %q\n  token = %q", sec.CAFile, c.NomadToken)
		consulExtra = fmt.Sprintf("\n  ca_file = %q\n  token = %q", sec.CAFile, c.ConsulToken)
		tlsBlock = fmt.Sprintf("tls {\n  cert_file = %q\n  key_file = %q\n}\n", sec.HarvestCert, sec.HarvestKey)
		proxy = append(proxy, fmt.Sprintf("tls_cert_file = %q\n  tls_key_file = %q", sec.HarvestCert, sec.HarvestKey))
	}
	if c.Proxy != "" {
		proxy = append(proxy, c.Proxy)
	}
	level := c.LogLevel
	if level == "" {
		level = "INFO"
	}
	return fmt.Sprintf(`log_level = %q
http_addr = %q
%snomad {
  address = %q%s
}
consul {
  address = %q
  prefix  = %q%s
}
classify {
  interval = "24h"
}
proxy {
  %s
}
acl {
  tokens = [%q]
}
%s
`, level, c.HTTPAddr, tlsBlock, s.NomadAddr(), nomadExtra, s.ConsulAddr(), c.Prefix, consulExtra,
		strings.Join(proxy, "\n  "), c.Token, c.Extra)
}
