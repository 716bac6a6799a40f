package provider

// The platform on a cluster with ACLs: its namespace, each storage node's
// own credentials, and the ACL objects its jobs' workload identities need.
// The policies themselves are Harvest's (jobs/acl, rendered by the module):
// the placer's Nomad policy is attached to the harvest-placer job, so its
// workload identity is its token; the Consul policies become roles that a
// binding rule gives the tasks of harvest-placer and harvest-blob in the
// platform's namespace, so their consul blocks get just those rights.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	consulapi "github.com/hashicorp/consul/api"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
)

// aclDescription marks the ACL objects the platform owns.
const aclDescription = "harvest_platform"

// roles are the Consul roles the platform makes: role (= job) -> policy.
var roles = map[string]string{"harvest-placer": "placer.consul", "harvest-blob": "blob.consul"}

// ensureNamespace creates the platform's Nomad namespace when it is not
// "default".
func (d *deployer) ensureNamespace(ctx context.Context) error {
	if d.namespace == "default" {
		return nil
	}
	_, err := d.nomad.Namespaces().Register(&nomadapi.Namespace{Name: d.namespace, Description: "Harvest's platform jobs"},
		(&nomadapi.WriteOptions{}).WithContext(ctx))
	if err != nil {
		return fmt.Errorf("nomad namespace %s: %w", d.namespace, err)
	}
	return nil
}

// storageCredentials are each harvested client's MinIO keys, as the
// storage and blob jobs' templates read them: <node>_access_key and
// <node>_secret_key (node names with '-' and '.' as '_'), the secret derived
// from the storage secret key (HMAC-SHA256 over the node's name), so that a
// node's keys open that node only. Clients that join later get theirs at
// the next apply.
func storageCredentials(ctx context.Context, nomad *nomadapi.Client, accessKey, secret string) (map[string]string, error) {
	stubs, _, err := nomad.Nodes().List((&nomadapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("listing Nomad's clients for the storage nodes' keys: %w", err)
	}
	out := map[string]string{}
	for _, s := range stubs {
		node, _, err := nomad.Nodes().Info(s.ID, (&nomadapi.QueryOptions{}).WithContext(ctx))
		if err != nil {
			return nil, err
		}
		if node.Meta[contract.NodeTenant] == "" {
			continue // the storage job runs on harvested clients only
		}
		key := strings.NewReplacer("-", "_", ".", "_").Replace(node.Name)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte("harvest-storage/" + node.Name))
		out[key+"_access_key"] = accessKey + "-" + key
		out[key+"_secret_key"] = hex.EncodeToString(mac.Sum(nil))[:40]
	}
	return out, nil
}

// applyACL creates or updates the platform's ACL objects when the module
// gives policies.
func (d *deployer) applyACL(ctx context.Context, m *platformModel) error {
	policies := map[string]string{}
	if !m.ACLPolicies.IsNull() && !m.ACLPolicies.IsUnknown() {
		for k, v := range m.ACLPolicies.Elements() {
			if s, ok := v.(interface{ ValueString() string }); ok {
				policies[k] = s.ValueString()
			}
		}
	}
	if len(policies) == 0 {
		return nil
	}
	if rules, ok := policies["placer.nomad"]; ok {
		if old, _, err := d.nomad.ACLPolicies().Info("harvest-placer", (&nomadapi.QueryOptions{}).WithContext(ctx)); err == nil &&
			old.Description != aclDescription {
			return fmt.Errorf("a Nomad ACL policy named harvest-placer exists and is not the platform's: rename or remove it")
		}
		p := &nomadapi.ACLPolicy{Name: "harvest-placer", Description: aclDescription, Rules: rules,
			JobACL: &nomadapi.JobACL{Namespace: d.namespace, JobID: "harvest-placer"}}
		if _, err := d.nomad.ACLPolicies().Upsert(p, (&nomadapi.WriteOptions{}).WithContext(ctx)); err != nil {
			return fmt.Errorf("nomad acl policy harvest-placer: %w", err)
		}
	}
	q := (&consulapi.QueryOptions{}).WithContext(ctx)
	w := (&consulapi.WriteOptions{}).WithContext(ctx)
	for role, name := range roles {
		rules, ok := policies[name]
		if !ok {
			continue
		}
		pol, _, err := d.consul.ACL().PolicyReadByName(role, q)
		if err != nil {
			return fmt.Errorf("consul policy %s: %w", role, err)
		}
		switch {
		case pol == nil:
			pol, _, err = d.consul.ACL().PolicyCreate(&consulapi.ACLPolicy{Name: role, Description: aclDescription, Rules: rules}, w)
		case pol.Description != aclDescription:
			return fmt.Errorf("a Consul ACL policy named %s exists and is not the platform's: rename or remove it", role)
		default:
			pol.Rules, pol.Description = rules, aclDescription
			pol, _, err = d.consul.ACL().PolicyUpdate(pol, w)
		}
		if err != nil {
			return fmt.Errorf("consul policy %s: %w", role, err)
		}
		r, _, err := d.consul.ACL().RoleReadByName(role, q)
		if err != nil {
			return fmt.Errorf("consul role %s: %w", role, err)
		}
		link := []*consulapi.ACLRolePolicyLink{{ID: pol.ID}}
		switch {
		case r == nil:
			_, _, err = d.consul.ACL().RoleCreate(&consulapi.ACLRole{Name: role, Description: aclDescription, Policies: link}, w)
		case r.Description != aclDescription:
			return fmt.Errorf("a Consul ACL role named %s exists and is not the platform's: rename or remove it", role)
		default:
			r.Policies, r.Description = link, aclDescription
			_, _, err = d.consul.ACL().RoleUpdate(r, w)
		}
		if err != nil {
			return fmt.Errorf("consul role %s: %w", role, err)
		}
	}
	return d.applyBindingRule(ctx, m.ConsulAuthMethod.ValueString())
}

// applyBindingRule gives a task of a platform job (in the platform's
// namespace) the role named as its job, when there is one.
func (d *deployer) applyBindingRule(ctx context.Context, method string) error {
	rule := &consulapi.ACLBindingRule{AuthMethod: method, Description: aclDescription + " " + d.namespace,
		Selector: fmt.Sprintf(`value.nomad_namespace == %q and "nomad_service" not in value`, d.namespace),
		BindType: consulapi.BindingRuleBindTypeRole, BindName: "${value.nomad_job_id}"}
	existing, _, err := d.consul.ACL().BindingRuleList(method, (&consulapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return fmt.Errorf("consul binding rules of %s: %w", method, err)
	}
	for _, r := range existing {
		if r.Description == rule.Description {
			rule.ID = r.ID
			_, _, err = d.consul.ACL().BindingRuleUpdate(rule, (&consulapi.WriteOptions{}).WithContext(ctx))
			return err
		}
	}
	_, _, err = d.consul.ACL().BindingRuleCreate(rule, (&consulapi.WriteOptions{}).WithContext(ctx))
	return err
}

// removeACL deletes the ACL objects applyACL made (those it marked).
func (d *deployer) removeACL(ctx context.Context) error {
	w := (&nomadapi.WriteOptions{}).WithContext(ctx)
	if p, _, err := d.nomad.ACLPolicies().Info("harvest-placer", nil); err == nil && p.Description == aclDescription {
		if _, err := d.nomad.ACLPolicies().Delete("harvest-placer", w); err != nil {
			return fmt.Errorf("deleting nomad acl policy harvest-placer: %w", err)
		}
	}
	if d.consul == nil {
		return nil
	}
	cw := (&consulapi.WriteOptions{}).WithContext(ctx)
	if rules, _, err := d.consul.ACL().BindingRuleList("", nil); err == nil {
		for _, r := range rules {
			if r.Description == aclDescription+" "+d.namespace {
				if _, err := d.consul.ACL().BindingRuleDelete(r.ID, cw); err != nil {
					return fmt.Errorf("deleting consul binding rule: %w", err)
				}
			}
		}
	}
	for role := range roles {
		if r, _, err := d.consul.ACL().RoleReadByName(role, nil); err == nil && r != nil && r.Description == aclDescription {
			if _, err := d.consul.ACL().RoleDelete(r.ID, cw); err != nil {
				return fmt.Errorf("deleting consul role %s: %w", role, err)
			}
		}
		if p, _, err := d.consul.ACL().PolicyReadByName(role, nil); err == nil && p != nil && p.Description == aclDescription {
			if _, err := d.consul.ACL().PolicyDelete(p.ID, cw); err != nil {
				return fmt.Errorf("deleting consul policy %s: %w", role, err)
			}
		}
	}
	return nil
}
