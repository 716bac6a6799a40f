package connect

import (
	"fmt"
	"strings"

	consulapi "github.com/hashicorp/consul/api"

	"github.com/harvest-platform/harvest/contract"
)

// DefaultPrefix is the Consul KV prefix of Harvest's state unless a
// component's consul block says otherwise.
const DefaultPrefix = contract.DefaultKVPrefix

// Consul is a component's `consul` block: where Consul's HTTP API is, the
// ACL token and TLS files, and the KV prefix Harvest's state lives under.
// An empty field leaves the environment's value (or the api package's
// default) in place.
type Consul struct {
	Address       string `hcl:"address,optional"`         // host:port, or https://host:port
	Token         string `hcl:"token,optional"`           // ACL token (secret ID)
	TokenFile     string `hcl:"token_file,optional"`      // a file holding it (wins over token)
	Datacenter    string `hcl:"datacenter,optional"`      //
	CAFile        string `hcl:"ca_file,optional"`         // CA bundle to verify Consul's certificate
	CAPath        string `hcl:"ca_path,optional"`         //
	CertFile      string `hcl:"cert_file,optional"`       // client certificate (verify_incoming)
	KeyFile       string `hcl:"key_file,optional"`        //
	TLSServerName string `hcl:"tls_server_name,optional"` // name to verify, e.g. server.dc1.consul
	TLSSkipVerify *bool  `hcl:"tls_skip_verify,optional"` // never in production
	Prefix        string `hcl:"prefix,optional"`          // KV prefix of Harvest's state (default harvest/)
}

// Over lays o's non-empty fields over c (flags over a file).
func (c Consul) Over(o Consul) Consul {
	overlay(layer{&c.Address, o.Address}, layer{&c.Token, o.Token}, layer{&c.TokenFile, o.TokenFile},
		layer{&c.Datacenter, o.Datacenter}, layer{&c.CAFile, o.CAFile}, layer{&c.CAPath, o.CAPath}, layer{&c.CertFile, o.CertFile},
		layer{&c.KeyFile, o.KeyFile}, layer{&c.TLSServerName, o.TLSServerName}, layer{&c.Prefix, o.Prefix})
	if o.TLSSkipVerify != nil {
		c.TLSSkipVerify = o.TLSSkipVerify
	}
	return c
}

// Validate checks the cert and key go together and every named file is
// readable.
func (c Consul) Validate(block string) error {
	if (c.CertFile == "") != (c.KeyFile == "") {
		return fmt.Errorf("%s: cert_file and key_file go together", block)
	}
	return checkFiles(block, map[string]string{"token_file": c.TokenFile, "ca_file": c.CAFile, "cert_file": c.CertFile, "key_file": c.KeyFile})
}

// KVPrefix is the prefix, or DefaultPrefix, ending in a slash
// (contract.KVPrefix).
func (c Consul) KVPrefix() string { return contract.KVPrefix(c.Prefix) }

// APIConfig is consulapi.DefaultConfig() (the environment) with the
// block's fields over it. An https:// address turns TLS on.
func (c Consul) APIConfig() *consulapi.Config {
	cfg := consulapi.DefaultConfig()
	// Harvest's history values are compressed already (history's format 3):
	// gzip on the wire would only cost CPU on both ends
	cfg.Transport.DisableCompression = true
	overlay(layer{&cfg.Address, c.Address}, layer{&cfg.Token, c.Token}, layer{&cfg.TokenFile, c.TokenFile},
		layer{&cfg.Datacenter, c.Datacenter}, layer{&cfg.TLSConfig.CAFile, c.CAFile}, layer{&cfg.TLSConfig.CAPath, c.CAPath},
		layer{&cfg.TLSConfig.CertFile, c.CertFile}, layer{&cfg.TLSConfig.KeyFile, c.KeyFile}, layer{&cfg.TLSConfig.Address, c.TLSServerName})
	if c.TLSSkipVerify != nil {
		cfg.TLSConfig.InsecureSkipVerify = *c.TLSSkipVerify
	}
	if c.TokenFile != "" {
		cfg.Token = "" // the file wins; the api reads it when the client is made
	}
	if (c.CAFile != "" || c.CertFile != "") && !strings.Contains(cfg.Address, "://") {
		cfg.Scheme = "https" // TLS files without a scheme mean TLS
	}
	return cfg
}

// Client is a Consul API client as the block and the environment say.
func (c Consul) Client() (*consulapi.Client, error) {
	return consulapi.NewClient(c.APIConfig())
}
