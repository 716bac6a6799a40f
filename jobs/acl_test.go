package jobs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl"
	nomadacl "github.com/hashicorp/nomad/acl"
)

// TestACLPoliciesRenderAndParse: every shipped policy renders with the
// variables filled in, and Nomad's own parser (strict, as `nomad acl policy
// apply` is) or HCL (Consul's syntax) reads it.
func TestACLPoliciesRenderAndParse(t *testing.T) {
	vars := map[string]string{"prefix": "harvest/", "namespace": "default"}
	files, err := fs.Glob(ACL, "acl/*.hcl")
	if err != nil || len(files) < 5 {
		t.Fatalf("policies: %v %v", files, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "acl/"), ".hcl")
		p, err := Policy(name, vars)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasSuffix(name, ".nomad") {
			if _, err := nomadacl.Parse(p, nomadacl.PolicyParseStrict); err != nil {
				t.Errorf("%s: Nomad refuses it: %v", name, err)
			}
			continue
		}
		var out map[string]any
		if err := hcl.Decode(&out, p); err != nil || len(out) == 0 {
			t.Errorf("%s: not HCL: %v", name, err)
		}
	}
	if _, err := Policy("placer.consul", map[string]string{}); err == nil || !strings.Contains(err.Error(), "left unset") {
		t.Fatalf("an unset variable: %v", err)
	}
}

// TestPlacerNomadPolicyIsScopedToTheHarvestedNamespace: the placer's token
// may submit jobs in the harvested namespace and nowhere else, and may not
// touch Harvest's capability.
func TestPlacerNomadPolicyIsScopedToTheHarvestedNamespace(t *testing.T) {
	p, err := Policy("placer.nomad", map[string]string{"namespace": "batch"})
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := nomadacl.Parse(p, nomadacl.PolicyParseStrict)
	if err != nil {
		t.Fatal(err)
	}
	a, err := nomadacl.NewACL(false, []*nomadacl.Policy{parsed})
	if err != nil {
		t.Fatal(err)
	}
	if !a.AllowNsOp("batch", nomadacl.NamespaceCapabilitySubmitJob) || a.AllowNsOp("default", nomadacl.NamespaceCapabilitySubmitJob) ||
		a.AllowNsOp("batch", nomadacl.NamespaceCapabilityAllocExec) || !a.AllowNodeWrite() || a.AllowOperatorRead() ||
		a.AllowVariableOperation("batch", "harvest/placer", nomadacl.VariablesCapabilityWrite, nil) {
		t.Fatal("the placer's Nomad policy grants more or less than it should")
	}
}

// TestTheTerraformModuleShipsTheSamePolicies: terraform/modules/harvest/acl
// is a copy of acl/ (a module cannot read outside its folder once
// published); the two must not drift apart.
func TestTheTerraformModuleShipsTheSamePolicies(t *testing.T) {
	files, _ := fs.Glob(ACL, "acl/*.hcl")
	for _, f := range files {
		ours, _ := ACL.ReadFile(f)
		theirs, err := os.ReadFile(filepath.Join("..", "terraform", "modules", "harvest", f))
		if err != nil || string(ours) != string(theirs) {
			t.Errorf("terraform/modules/harvest/%s differs from jobs/%s (copy it over): %v", f, f, err)
		}
	}
}
