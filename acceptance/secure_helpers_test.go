//go:build acceptance

package acceptance

// A secure run (HARVEST_ACCEPTANCE_SECURE=1, `make acceptance-secure`)
// starts the cluster as `harvest-dev dev-cluster up -secure` does: TLS on
// every agent, Consul and Nomad ACLs in default-deny. The main flows' tests
// run there unchanged (their helpers speak TLS and send tokens when the
// cluster is secure), beside the TestSecure* tests of what must be refused.
// Every Harvest daemon a test starts gets a token of its own made from the
// policies Harvest ships (jobs/acl), never a management token.

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/jobs"
)

// secureRun reports whether this run asks for a secure cluster.
func secureRun() bool { return os.Getenv("HARVEST_ACCEPTANCE_SECURE") != "" }

// requireSecure skips a TestSecure* test on a cluster without TLS and ACLs.
func requireSecure(t *testing.T) *localcluster.Secure {
	t.Helper()
	if cluster.Secure == nil {
		t.Skip("needs the secure cluster: make acceptance-secure (HARVEST_ACCEPTANCE_SECURE=1)")
	}
	return cluster.Secure
}

// tokens are the Nomad and Consul tokens the secure run made for the
// components and people of the tests.
var tokens struct {
	operator     string // Nomad: the Harvest capability (operator.nomad)
	submitter    string // Nomad: submit jobs in the harvested namespace, nothing of Harvest's
	placerNomad  string // Nomad: placer.nomad
	placerConsul string // Consul: placer.consul
	blobConsul   string // Consul: blob.consul
}

// secureSetup makes the tokens and points the CLIs the tests run (nomad,
// consul, harvestctl) at the cluster's CA; harvestctl talks to the placer
// as an operator holding a Nomad token with the Harvest capability.
func secureSetup() error {
	sec := cluster.Secure
	vars := map[string]string{"prefix": localcluster.KVPrefix, "namespace": localcluster.HarvestedNamespace}
	policy := func(name string) string {
		p, err := jobs.Policy(name, vars)
		if err != nil {
			panic(err)
		}
		return p
	}
	var err error
	mk := func(dst *string, name, rules string) {
		if err == nil {
			*dst, err = makeNomadToken(name, rules)
		}
	}
	// the tests' own names: the platform Terraform deploys makes its own
	// harvest-placer and harvest-blob policies and roles
	mk(&tokens.operator, "acc-operator", policy("operator.nomad"))
	mk(&tokens.submitter, "acc-submitter", `namespace "default" { policy = "write" }`+"\n"+`node { policy = "read" }`)
	mk(&tokens.placerNomad, "acc-placer", policy("placer.nomad"))
	mc := func(dst *string, name, rules string) {
		if err == nil {
			*dst, err = makeConsulToken(name, rules)
		}
	}
	mc(&tokens.placerConsul, "acc-placer", policy("placer.consul"))
	mc(&tokens.blobConsul, "acc-blob", policy("blob.consul"))
	if err != nil {
		return err
	}
	for k, v := range map[string]string{
		"NOMAD_CACERT": sec.CAFile, "CONSUL_CACERT": sec.CAFile, "HARVEST_CACERT": sec.CAFile,
		// an operator's shell: Consul's management token for history import,
		// the Harvest capability (a Nomad token) for the placer
		"CONSUL_HTTP_TOKEN": sec.ConsulToken, "HARVEST_PLACER_TOKEN": tokens.operator,
	} {
		os.Setenv(k, v)
	}
	return nil
}

// makeNomadToken creates a Nomad ACL policy and a client token holding it
// (with the management token).
func makeNomadToken(name, rules string) (string, error) {
	c, err := cluster.NomadClient()
	if err != nil {
		return "", err
	}
	if _, err := c.ACLPolicies().Upsert(&nomadapi.ACLPolicy{Name: name, Rules: rules}, nil); err != nil {
		return "", fmt.Errorf("nomad policy %s: %w", name, err)
	}
	tok, _, err := c.ACLTokens().Create(&nomadapi.ACLToken{Name: name, Type: "client", Policies: []string{name}}, nil)
	if err != nil {
		return "", fmt.Errorf("nomad token %s: %w", name, err)
	}
	return tok.SecretID, nil
}

// makeConsulToken creates a Consul ACL policy and a token holding it.
func makeConsulToken(name, rules string) (string, error) {
	c := cluster.ConsulClient()
	p, _, err := c.ACL().PolicyCreate(&consulapi.ACLPolicy{Name: name, Rules: rules}, nil)
	if err != nil {
		return "", fmt.Errorf("consul policy %s: %w", name, err)
	}
	tok, _, err := c.ACL().TokenCreate(&consulapi.ACLToken{Description: name, Policies: []*consulapi.ACLTokenPolicyLink{{ID: p.ID}}}, nil)
	if err != nil {
		return "", fmt.Errorf("consul token %s: %w", name, err)
	}
	return tok.SecretID, nil
}

// harvestScheme is how Harvest's own daemons serve in this run.
func harvestScheme() string {
	if cluster.Secure != nil {
		return "https"
	}
	return "http"
}

var (
	harvestClientOnce sync.Once
	harvestClient     *http.Client
)

// harvestHTTP is an HTTP client for Harvest's daemons: it trusts the
// cluster's CA in a secure run.
func harvestHTTP() *http.Client {
	harvestClientOnce.Do(func() {
		harvestClient = &http.Client{Timeout: 2 * time.Minute}
		if sec := cluster.Secure; sec != nil {
			pem, err := os.ReadFile(sec.CAFile)
			if err != nil {
				panic(err)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(pem)
			harvestClient.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		}
	})
	return harvestClient
}

// nomadEnv is what the nomad CLI needs beside NOMAD_ADDR: in a secure run
// the CA and token (the management token unless one is given).
func nomadEnv(token string) []string {
	sec := cluster.Secure
	if sec == nil {
		return nil
	}
	if token == "" {
		token = sec.NomadToken
	}
	return []string{"NOMAD_CACERT=" + sec.CAFile, "NOMAD_TOKEN=" + token}
}
