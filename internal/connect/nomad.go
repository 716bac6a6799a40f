// Package connect is how every Harvest component (driver, placer, blob
// front, harvestctl, the Terraform provider) reaches Nomad, Consul and
// Harvest's own HTTPS APIs, and how the placer and the blob front serve
// theirs over TLS. Clients start from the api packages' DefaultConfig(), so
// the standard environment applies (NOMAD_ADDR, NOMAD_TOKEN, NOMAD_CACERT,
// NOMAD_CAPATH, NOMAD_CLIENT_CERT, NOMAD_CLIENT_KEY, NOMAD_TLS_SERVER_NAME,
// NOMAD_SKIP_VERIFY, NOMAD_REGION, NOMAD_NAMESPACE; CONSUL_HTTP_ADDR,
// CONSUL_HTTP_TOKEN, CONSUL_HTTP_TOKEN_FILE, CONSUL_HTTP_SSL, CONSUL_CACERT,
// CONSUL_CAPATH, CONSUL_CLIENT_CERT, CONSUL_CLIENT_KEY,
// CONSUL_TLS_SERVER_NAME, CONSUL_HTTP_SSL_VERIFY, ...), and a component's
// configuration, then its flags, win over the environment field by field.
//
// The package imports no component.
package connect

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/hashicorp/go-cleanhttp"
	nomadapi "github.com/hashicorp/nomad/api"
)

// Nomad is a component's `nomad` block: where Nomad's HTTP API is, the
// ACL token to call it with and the TLS files to trust and present. Every
// field is optional; an empty one leaves the environment's value (or the
// api package's default) in place.
type Nomad struct {
	Address       string `hcl:"address,optional"`         // e.g. https://nomad.service.consul:4646
	Token         string `hcl:"token,optional"`           // ACL token (secret ID)
	TokenFile     string `hcl:"token_file,optional"`      // a file holding it (wins over token)
	Region        string `hcl:"region,optional"`          //
	Namespace     string `hcl:"namespace,optional"`       //
	CAFile        string `hcl:"ca_file,optional"`         // CA bundle to verify Nomad's certificate
	CAPath        string `hcl:"ca_path,optional"`         // a folder of CA certificates
	CertFile      string `hcl:"cert_file,optional"`       // client certificate (Nomad's verify_https_client)
	KeyFile       string `hcl:"key_file,optional"`        //
	TLSServerName string `hcl:"tls_server_name,optional"` // name to verify, e.g. server.global.nomad
	TLSSkipVerify *bool  `hcl:"tls_skip_verify,optional"` // never in production
}

// Over lays o's non-empty fields over n (flags over a file).
func (n Nomad) Over(o Nomad) Nomad {
	overlay(layer{&n.Address, o.Address}, layer{&n.Token, o.Token}, layer{&n.TokenFile, o.TokenFile},
		layer{&n.Region, o.Region}, layer{&n.Namespace, o.Namespace}, layer{&n.CAFile, o.CAFile}, layer{&n.CAPath, o.CAPath},
		layer{&n.CertFile, o.CertFile}, layer{&n.KeyFile, o.KeyFile}, layer{&n.TLSServerName, o.TLSServerName})
	if o.TLSSkipVerify != nil {
		n.TLSSkipVerify = o.TLSSkipVerify
	}
	return n
}

// Validate checks what can be checked without dialling: the address parses,
// the cert and key go together, and every named file is readable.
func (n Nomad) Validate(block string) error {
	if (n.CertFile == "") != (n.KeyFile == "") {
		return fmt.Errorf("%s: cert_file and key_file go together", block)
	}
	if n.Address != "" && !strings.Contains(n.Address, "://") {
		return fmt.Errorf("%s.address %q: want a URL such as https://127.0.0.1:4646", block, n.Address)
	}
	return checkFiles(block, map[string]string{"token_file": n.TokenFile, "ca_file": n.CAFile, "cert_file": n.CertFile, "key_file": n.KeyFile})
}

// APIConfig is nomadapi.DefaultConfig() (the environment) with the block's
// fields over it.
func (n Nomad) APIConfig() (*nomadapi.Config, error) {
	c := nomadapi.DefaultConfig()
	overlay(layer{&c.Address, n.Address}, layer{&c.SecretID, n.Token}, layer{&c.Region, n.Region},
		layer{&c.Namespace, n.Namespace}, layer{&c.TLSConfig.CACert, n.CAFile}, layer{&c.TLSConfig.CAPath, n.CAPath},
		layer{&c.TLSConfig.ClientCert, n.CertFile}, layer{&c.TLSConfig.ClientKey, n.KeyFile},
		layer{&c.TLSConfig.TLSServerName, n.TLSServerName})
	if n.TLSSkipVerify != nil {
		c.TLSConfig.Insecure = *n.TLSSkipVerify
	}
	if n.TokenFile != "" {
		tok, err := readToken(n.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("nomad token_file: %w", err)
		}
		c.SecretID = tok
	}
	return c, nil
}

// Client is a Nomad API client as the block and the environment say.
func (n Nomad) Client() (*nomadapi.Client, error) {
	c, err := n.APIConfig()
	if err != nil {
		return nil, err
	}
	return nomadapi.NewClient(c)
}

// Transport is an HTTP transport that trusts and presents what the block
// and the environment say (for the admission proxy, which forwards the
// caller's own requests and so must not use an api.Client).
func (n Nomad) Transport() (*http.Transport, error) {
	c, err := n.APIConfig()
	if err != nil {
		return nil, err
	}
	hc := cleanhttp.DefaultPooledClient()
	hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if err := nomadapi.ConfigureTLS(hc, c.TLSConfig); err != nil {
		return nil, fmt.Errorf("nomad tls: %w", err)
	}
	return hc.Transport.(*http.Transport), nil
}

// URL is the address the block and the environment resolve to.
func (n Nomad) URL() (string, error) {
	c, err := n.APIConfig()
	if err != nil {
		return "", err
	}
	return c.Address, nil
}

func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return tok, nil
}

func checkFiles(block string, files map[string]string) error {
	for name, path := range files {
		if path == "" {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", block, name, err)
		}
		f.Close()
	}
	return nil
}
