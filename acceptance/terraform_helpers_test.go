//go:build acceptance

package acceptance

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/zclconf/go-cty/cty"
)

// tfPorts are the static ports the platform's services take in the
// Terraform tests: the cluster's four spare ports (no other test's placer or
// front runs at the same time).
type tfPorts struct{ placerHTTP, placerProxy, blobS3, blobAdmin int }

func terraformPorts() tfPorts {
	return tfPorts{cluster.SparePort(0), cluster.SparePort(1), cluster.SparePort(2), cluster.SparePort(3)}
}

// terraformEnv keeps Terraform offline and on this machine: Harvest's
// provider comes from the filesystem mirror `make build` writes (and from
// nowhere else), no version check is made, no prompt is shown.
func terraformEnv(t *testing.T) []string {
	t.Helper()
	rc := filepath.Join(bin, "terraform.rc")
	return []string{"TF_CLI_CONFIG_FILE=" + rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0"}
}

// isOpenTofu: make stack links OpenTofu as terraform where the machine has
// no terraform.
func isOpenTofu(t *testing.T) bool {
	t.Helper()
	out, err := exec.Command(filepath.Join(stack, "terraform"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("terraform version: %v\n%s", err, out)
	}
	return strings.Contains(string(out), "OpenTofu")
}

// passing is how many instances of a Consul service pass every check.
func passing(t *testing.T, service string) int {
	t.Helper()
	entries, _, err := consulAPI(t, cluster.ConsulAddr()).Health().Service(service, "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// storageCapacities is the capacity_mb each harvest-storage instance
// registered in Consul, by node.
func storageCapacities(t *testing.T) map[string]string {
	t.Helper()
	entries, _, err := consulAPI(t, cluster.ConsulAddr()).Health().Service("harvest-storage", "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		out[e.Service.Meta["node"]] = e.Service.Meta["capacity_mb"]
	}
	return out
}

// platformGone checks that the platform's jobs, variables and Consul
// services are all gone and no MinIO of the storage job is left running.
func platformGone(t *testing.T) error {
	t.Helper()
	c := nomadClient(t)
	for _, job := range []string{"harvest-storage", "harvest-blob", "harvest-placer"} {
		if j, _, err := c.Jobs().Info(job, nil); err == nil {
			return fmt.Errorf("job %s still registered (stop=%v)", job, j.Stop != nil && *j.Stop)
		}
	}
	for _, path := range []string{"nomad/jobs/harvest-storage", "nomad/jobs/harvest-blob"} {
		if _, _, err := c.Variables().Read(path, nil); err != nomadapi.ErrVariablePathNotFound {
			return fmt.Errorf("nomad variable %s: %v (want it deleted)", path, err)
		}
	}
	for _, s := range []string{"harvest-storage", "harvest-blob", "harvest-blob-admin", "harvest-placer", "harvest-placer-proxy"} {
		entries, _, err := consulAPI(t, cluster.ConsulAddr()).Health().Service(s, "", false, nil)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			return fmt.Errorf("consul still lists %d instances of %s", len(entries), s)
		}
	}
	p := terraformPorts()
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/health", p.placerHTTP)); err == nil {
		resp.Body.Close()
		return fmt.Errorf("a placer still answers on port %d", p.placerHTTP)
	}
	return nil
}

// nodeMetaOf is a client's node meta as Nomad's server has it.
func nodeMetaOf(t *testing.T, name string) map[string]string {
	t.Helper()
	n, _, err := nomadClient(t).Nodes().Info(nodeID(t, name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n.Meta
}

// eventually retries check until it passes or timeout ends.
func eventually(timeout time.Duration, check func() error) error {
	var err error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if err = check(); err == nil {
			return nil
		}
	}
	return err
}

// clientOfTenant is the name of the first client whose tenant is id.
func clientOfTenant(t *testing.T, id string) string {
	t.Helper()
	for _, c := range cluster.NomadClients {
		if c.Meta["harvest_tenant"] == id {
			return c.Name
		}
	}
	t.Fatalf("no client of tenant %s", id)
	return ""
}

// rerunPlacerByHand does what an operator at a shell would: `nomad job run`
// of jobs/harvest-placer.nomad.hcl with the variables Terraform submitted,
// extra_config changed. It waits until the restarted placer answers.
func rerunPlacerByHand(t *testing.T, extraConfig string) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := nomadClient(t)
	job, _, err := c.Jobs().Info("harvest-placer", nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, _, err := c.Jobs().Submission("harvest-placer", int(*job.Version), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclwrite.ParseConfig([]byte(sub.Variables), "submitted.vars.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f.Body().SetAttributeValue("extra_config", cty.StringVal(extraConfig))
	varFile := filepath.Join(t.TempDir(), "placer.vars.hcl")
	if err := os.WriteFile(varFile, f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	nomadCLI(t, "job", "run", "-detach", "-var-file", varFile, filepath.Join(root, "jobs", "harvest-placer.nomad.hcl"))
	if err := eventually(time.Minute, func() error { return placerExtraConfig(t, extraConfig)(nil) }); err != nil {
		t.Fatal(err)
	}
	// the old allocation answers until Nomad has replaced it: wait for the
	// new version's allocation to run and the old one to be gone
	if err := eventually(time.Minute, func() error {
		job, _, err := c.Jobs().Info("harvest-placer", nil)
		if err != nil {
			return err
		}
		allocs, _, err := c.Jobs().Allocations("harvest-placer", false, nil)
		if err != nil {
			return err
		}
		current := 0
		for _, a := range allocs {
			switch {
			case a.JobVersion == *job.Version && a.ClientStatus == nomadapi.AllocClientStatusRunning:
				current++
			case a.JobVersion != *job.Version && (a.ClientStatus == nomadapi.AllocClientStatusRunning || a.ClientStatus == nomadapi.AllocClientStatusPending):
				return fmt.Errorf("allocation %s of version %d still %s", a.ID, a.JobVersion, a.ClientStatus)
			}
		}
		if current != 1 {
			return fmt.Errorf("%d running allocations of version %d", current, *job.Version)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("http://127.0.0.1:%d/v1/health", terraformPorts().placerHTTP)
	if err := eventually(time.Minute, func() error {
		resp, err := http.Get(addr)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if passing(t, "harvest-placer") != 1 {
			return fmt.Errorf("placer not passing")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// placerExtraConfig: the running placer job's submitted extra_config.
func placerExtraConfig(t *testing.T, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c := nomadClient(t)
		job, _, err := c.Jobs().Info("harvest-placer", nil)
		if err != nil {
			return err
		}
		sub, _, err := c.Jobs().Submission("harvest-placer", int(*job.Version), nil)
		if err != nil {
			return err
		}
		f, diags := hclwrite.ParseConfig([]byte(sub.Variables), "submitted.vars.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			return diags
		}
		got := ""
		if a := f.Body().GetAttribute("extra_config"); a != nil {
			got = strings.TrimSpace(string(a.Expr().BuildTokens(nil).Bytes()))
		}
		if wantTok := strings.TrimSpace(string(hclwrite.TokensForValue(cty.StringVal(want)).Bytes())); got != wantTok {
			return fmt.Errorf("harvest-placer v%d submitted extra_config = %s, want %s", *job.Version, got, wantTok)
		}
		return nil
	}
}

// deleteTenantByHand deletes a tenant's declaration with the placer's API.
func deleteTenantByHand(t *testing.T, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, fmt.Sprintf("http://127.0.0.1:%d/v1/tenants/%s", terraformPorts().placerHTTP, id), nil)
	req.Header.Set("Authorization", "Bearer "+placerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE tenant %s: %s", id, resp.Status)
	}
}
