//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// secureRoot is a root configuration of the module for the secure cluster,
// as an operator writes it: the provider over HTTPS with the CA and the
// management tokens, the platform in a namespace of its own with Harvest's
// ACL policies (acl = true) and HTTPS on its listeners.
func secureRoot(t *testing.T, root string) string {
	sec := cluster.Secure
	p := terraformPorts()
	return fmt.Sprintf(`
terraform {
  required_providers {
    harvest = {
      source  = "harvest-platform/harvest"
      version = "0.1.0"
    }
  }
}

provider "harvest" {
  nomad_address      = %[1]q
  nomad_ca_file      = %[3]q
  nomad_token        = %[4]q
  consul_address     = %[2]q
  consul_ca_file     = %[3]q
  consul_token       = %[5]q
  ca_file            = %[3]q
  placer_address     = "https://127.0.0.1:%[6]d"
  placer_token       = %[10]q
  blob_endpoint      = "https://127.0.0.1:%[8]d"
  blob_admin_address = "https://127.0.0.1:%[9]d"
  blob_admin_token   = %[11]q
  blob_access_key    = "tf-secure"
  blob_secret_key    = "tf-secure-secret"
}

module "harvest" {
  source = "../../modules/harvest"

  harvest_bin_dir     = %[12]q
  minio_path          = %[13]q
  storage_data_root   = %[14]q
  storage_capacity_mb = 2048
  storage_memory_mb   = 300
  nomad_address       = %[1]q
  consul_address      = %[2]q
  consul_prefix       = "harvest-tf/"
  ports               = { placer_http = %[6]d, placer_proxy = %[7]d, blob_s3 = %[8]d, blob_admin = %[9]d }
  health_timeout      = "4m"

  acl       = true
  namespace = "harvest-system"
  tls = {
    nomad_ca_file  = %[3]q
    consul_ca_file = %[3]q
    cert_file      = %[15]q
    key_file       = %[16]q
  }

  placer_token        = %[10]q
  blob_admin_token    = %[11]q
  blob_credentials    = { access_key = "tf-secure", secret_key = "tf-secure-secret" }
  storage_credentials = { access_key = "tf-storage", secret_key = "tf-storage-secret" }

  policy  = { replicas = 2, diversity = "degraded" }
  tenants = { "search/frontend" = { storage_mb = 2048 } }
  buckets = { "secure-datasets" = { replicas = 2, force_destroy = true } }
}
`, cluster.NomadAddr(), cluster.ConsulAddr(), sec.CAFile, sec.NomadToken, sec.ConsulToken, p.placerHTTP, p.placerProxy, p.blobS3,
		p.blobAdmin, placerToken, blobAdminToken, bin, filepath.Join(stack, "minio"), filepath.Join(cluster.RunDir, "tf-secure-storage"),
		sec.HarvestCert, sec.HarvestKey)
}

// TestSecureTerraformAppliesThePlatform: `terraform apply` of the module on
// the secure cluster brings the platform up in its own namespace with
// Harvest's ACL policies: the placer acts with its workload identity (the
// placer policy attached to its job), the placer and the front get their
// Consul tokens from their workload identities (roles bound by the
// platform's rule), each storage node has its own keys, and every listener
// speaks HTTPS. A tenant declared through the placer, a bucket and a dataset
// through the front over HTTPS work; the placer labels the nodes with its
// own identity; a plan right after is empty; destroy removes the jobs, the
// variables and the ACL objects.
func TestSecureTerraformAppliesThePlatform(t *testing.T) {
	sec := requireSecure(t)
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "terraform"), os.DirFS(filepath.Join(root, "terraform"))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "terraform", "examples", "secure")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(secureRoot(t, root)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := terraformEnv(t)
	tf := func(args ...string) (string, error) { return runTerraform(t, dir, env, args...) }
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			_, _ = tf("destroy", "-auto-approve")
		}
	})
	if out, err := tf("init"); err != nil {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	start := time.Now()
	if out, err := tf("apply", "-auto-approve"); err != nil {
		t.Fatalf("terraform apply: %v\n%s", err, out)
	}
	t.Logf("terraform apply took %s", time.Since(start).Round(time.Second))

	c := nomadClient(t)
	in := &nomadapi.QueryOptions{Namespace: "harvest-system"}
	for _, j := range []string{"harvest-storage", "harvest-blob", "harvest-placer"} {
		if job, _, err := c.Jobs().Info(j, in); err != nil || *job.Status != "running" {
			t.Fatalf("job %s in harvest-system: %v", j, err)
		}
	}
	pol, _, err := c.ACLPolicies().Info("harvest-placer", nil)
	if err != nil || pol.JobACL == nil || pol.JobACL.JobID != "harvest-placer" || pol.JobACL.Namespace != "harvest-system" {
		t.Fatalf("the placer's policy is not on its job: %+v %v", pol, err)
	}
	// each storage node has keys of its own
	v, _, err := c.Variables().Read("nomad/jobs/harvest-storage", in)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range cluster.NomadClients {
		k := strings.ReplaceAll(n.Name, "-", "_") + "_secret_key"
		if v.Items[k] == "" || seen[v.Items[k]] {
			t.Fatalf("storage node %s has no secret of its own (%q)", n.Name, k)
		}
		seen[v.Items[k]] = true
	}
	if _, ok := v.Items["secret_key"]; ok {
		t.Fatal("the storage nodes' variable holds the secret every node key derives from")
	}

	// the placer over HTTPS: the tenant the module declared; a refresh it
	// does with its own workload identity labels the nodes
	api := fmt.Sprintf("https://127.0.0.1:%d", terraformPorts().placerHTTP)
	first := cluster.NomadClients[0].Name
	if _, err := c.Nodes().Meta().Apply(&nomadapi.NodeMetaApplyRequest{NodeID: nodeID(t, first),
		Meta: map[string]*string{"harvest_class": nil}}, nil); err != nil {
		t.Fatal(err)
	}
	if code, body := placerCall(t, api, "", "GET", "/v1/tenants/search/frontend", ""); code != 200 || !strings.Contains(body, `"storage_mb":2048`) {
		t.Fatalf("tenant through the placer: %d %s", code, body)
	}
	if code, body := placerCall(t, api, tokens.operator, "POST", "/v1/classes/refresh", ""); code != 200 {
		t.Fatalf("classes refresh by the platform's placer: %d %s", code, body)
	}
	if err := eventually(30*time.Second, func() error {
		if nodeMetaOf(t, first)["harvest_class"] == "" {
			return fmt.Errorf("no class label on %s", first)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// a dataset through the front over HTTPS
	s3, err := minio.New(fmt.Sprintf("127.0.0.1:%d", terraformPorts().blobS3), &minio.Options{
		Creds: credentials.NewStaticV4("tf-secure", "tf-secure-secret", ""), Secure: true, Transport: harvestHTTP().Transport})
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("harvested dataset\n"), 20_000)
	ctx := context.Background()
	if _, err := s3.PutObject(ctx, "secure-datasets", "part-0.csv", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("PUT through the front: %v", err)
	}
	obj, err := s3.GetObject(ctx, "secure-datasets", "part-0.csv", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(obj); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GET through the front: %d bytes, %v", len(got), err)
	}

	if out, err := tf("plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("plan right after apply: %v\n%s", err, out)
	}
	if out, err := tf("destroy", "-auto-approve"); err != nil {
		t.Fatalf("terraform destroy: %v\n%s", err, out)
	}
	destroyed = true
	if _, _, err := c.ACLPolicies().Info("harvest-placer", nil); err == nil {
		t.Fatal("the placer's ACL policy outlived the platform")
	}
	if r, _, err := cluster.ConsulClient().ACL().RoleReadByName("harvest-blob", nil); err != nil || r != nil {
		t.Fatalf("the front's Consul role outlived the platform: %v %v", r, err)
	}
	_ = sec
}
