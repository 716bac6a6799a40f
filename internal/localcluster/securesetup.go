package localcluster

// What a secure cluster sets up through the APIs once its servers lead:
// Consul's policies and tokens for the agents, Nomad and the harvest
// drivers; Nomad's ACL bootstrap; Consul's auth method for Nomad's workload
// identities; and the storage nodes' credentials as a Nomad variable that
// only the storage job's tasks may read.

import (
	"context"
	"fmt"
	"os"
	"strings"

	consulapi "github.com/hashicorp/consul/api"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/connect"
	"github.com/harvest-platform/harvest/jobs"
)

// KVPrefix is the Consul KV prefix of Harvest's state on the local cluster.
const KVPrefix = "harvest/"

// HarvestedNamespace is the Nomad namespace harvested jobs run in here.
const HarvestedNamespace = "default"

// StorageVariable is the Nomad variable holding the storage nodes'
// credentials in a secure cluster (items <node>_access_key and
// <node>_secret_key): only the harvest-storage job's tasks may read it
// (Nomad's implicit workload policy), and the blob front's operator.
const StorageVariable = "nomad/jobs/harvest-storage"

// consulAPI is a client for one of the cluster's Consul agents: with the
// management token and the CA in a secure cluster.
func (s *State) consulAPI(addr string) *consulapi.Client {
	if s.Secure == nil {
		c, _ := consulapi.NewClient(&consulapi.Config{Address: addr, Scheme: "http"})
		return c
	}
	c, _ := connect.Consul{Address: "https://" + addr, Token: s.Secure.ConsulToken, CAFile: s.Secure.CAFile,
		CertFile: s.Secure.CLICert, KeyFile: s.Secure.CLIKey}.Client()
	return c
}

// policies renders one of Harvest's shipped ACL policies for this cluster.
func policy(name string) (string, error) {
	return jobs.Policy(name, map[string]string{"prefix": KVPrefix, "namespace": HarvestedNamespace})
}

// setupConsulACL creates the agents', Nomad's and the drivers' policies and
// tokens (their secrets chosen in newSecure) with the management token.
func setupConsulACL(s *State) error {
	c := s.consulAPI(s.ConsulServer.HTTPAddr)
	driverRules, err := policy("driver.consul")
	if err != nil {
		return err
	}
	for _, p := range []struct {
		name, rules, secret string
	}{
		// what a Consul client agent needs for itself
		{"consul-agents", `node_prefix "" { policy = "write" }` + "\n" + `service_prefix "" { policy = "read" }`, s.Secure.ConsulAgentToken},
		// Nomad's documented minimum for its agents
		{"nomad-agents", `agent_prefix "" { policy = "read" }` + "\n" + `node_prefix "" { policy = "write" }` + "\n" +
			`service_prefix "" { policy = "write" }` + "\n" + `acl = "write"`, s.Secure.NomadConsulToken},
		{"harvest-driver", driverRules, s.Secure.DriverConsulToken},
	} {
		pol, _, err := c.ACL().PolicyCreate(&consulapi.ACLPolicy{Name: p.name, Rules: p.rules}, nil)
		if err != nil {
			return fmt.Errorf("consul policy %s: %w", p.name, err)
		}
		if _, _, err := c.ACL().TokenCreate(&consulapi.ACLToken{SecretID: p.secret, Description: p.name,
			Policies: []*consulapi.ACLTokenPolicyLink{{ID: pol.ID}}}, nil); err != nil {
			return fmt.Errorf("consul token %s: %w", p.name, err)
		}
	}
	return nil
}

// bootstrapNomadACL bootstraps Nomad's ACLs with the management token's
// secret chosen in newSecure.
func bootstrapNomadACL(ctx context.Context, s *State) error {
	c, err := s.NomadClient()
	if err != nil {
		return err
	}
	_, _, err = c.ACLTokens().BootstrapOpts(s.Secure.NomadToken, (&nomadapi.WriteOptions{}).WithContext(ctx))
	if err != nil {
		return fmt.Errorf("nomad acl bootstrap: %w", err)
	}
	return nil
}

// nomadWorkloadsAuthMethod is the auth method Nomad's servers name by
// default (consul.service_auth_method, consul.task_auth_method).
const nomadWorkloadsAuthMethod = "nomad-workloads"

// setupWorkloadIdentity lets Consul accept Nomad's workload identities, as
// `nomad setup consul` does: a JWT auth method on Nomad's JWKS (over TLS,
// trusting the cluster's CA), a binding rule giving each service a service
// identity, and one giving a task the role nomad-tasks-<namespace> when such
// a role exists (none does for the namespace harvested jobs run in: their
// tasks get no Consul token).
func setupWorkloadIdentity(s *State) error {
	ca, err := os.ReadFile(s.Secure.CAFile)
	if err != nil {
		return err
	}
	c := s.consulAPI(s.ConsulServer.HTTPAddr)
	_, _, err = c.ACL().AuthMethodCreate(&consulapi.ACLAuthMethod{
		Name: nomadWorkloadsAuthMethod, Type: "jwt", DisplayName: "Nomad workloads",
		Description: "Nomad's workload identities (tasks and services)",
		Config: map[string]any{
			"JWKSURL":          s.NomadAddr() + "/.well-known/jwks.json",
			"JWKSCACert":       string(ca),
			"JWTSupportedAlgs": []string{"RS256"},
			"BoundAudiences":   []string{"consul.io"},
			"ClaimMappings": map[string]string{"nomad_namespace": "nomad_namespace", "nomad_job_id": "nomad_job_id",
				"nomad_task": "nomad_task", "nomad_service": "nomad_service"},
		},
	}, nil)
	if err != nil {
		return fmt.Errorf("consul auth method: %w", err)
	}
	for _, r := range []consulapi.ACLBindingRule{
		{AuthMethod: nomadWorkloadsAuthMethod, Selector: `"nomad_service" in value`, BindType: consulapi.BindingRuleBindTypeService,
			BindName: "${value.nomad_service}", Description: "a Nomad service registers as itself"},
		{AuthMethod: nomadWorkloadsAuthMethod, Selector: `"nomad_service" not in value`, BindType: consulapi.BindingRuleBindTypeRole,
			BindName: "nomad-tasks-${value.nomad_namespace}", Description: "a Nomad task gets its namespace's role, if there is one"},
	} {
		if _, _, err := c.ACL().BindingRuleCreate(&r, nil); err != nil {
			return fmt.Errorf("consul binding rule: %w", err)
		}
	}
	return nil
}

// writeStorageCredentials keeps the MinIO servers' credentials in
// StorageVariable, as the harvest-storage job reads them.
func writeStorageCredentials(ctx context.Context, s *State) error {
	c, err := s.NomadClient()
	if err != nil {
		return err
	}
	items := nomadapi.VariableItems{}
	for _, m := range s.MinIO {
		node := strings.ReplaceAll(m.Node, "-", "_")
		items[node+"_access_key"], items[node+"_secret_key"] = m.AccessKey, m.SecretKey
	}
	_, _, err = c.Variables().Create(&nomadapi.Variable{Path: StorageVariable, Namespace: HarvestedNamespace, Items: items},
		(&nomadapi.WriteOptions{Namespace: HarvestedNamespace}).WithContext(ctx))
	return err
}
