//go:build acceptance

package acceptance

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/terraform/provider"
)

// tfSettings are what the provider test's configurations vary.
type tfSettings struct {
	capacityMB, tenantStorageMB, bucketReplicas int
	constantWeight                              float64
	withClasses                                 bool
	bucketRead                                  string // the bucket's read mode; unset when empty
}

const tfPrefix = "harvest-tf/"

func providerConfig(t *testing.T, s tfSettings) string {
	p := terraformPorts()
	classes, read := "", ""
	if s.bucketRead != "" {
		read = fmt.Sprintf("read          = %q", s.bucketRead)
	}
	if s.withClasses {
		classes = `data "harvest_classes" "c" {
  depends_on = [harvest_platform.p]
}`
	}
	return fmt.Sprintf(`
provider "harvest" {
  nomad_address      = %[1]q
  consul_address     = %[2]q
  placer_address     = "http://127.0.0.1:%[3]d"
  placer_token       = %[16]q
  blob_endpoint      = "127.0.0.1:%[5]d"
  blob_admin_address = "http://127.0.0.1:%[6]d"
  blob_access_key    = "tf-blob"
  blob_secret_key    = "tf-blob-secret"
}

resource "harvest_platform" "p" {
  harvest_bin_dir     = %[7]q
  minio_path          = %[8]q
  storage_data_root   = %[9]q
  storage_capacity_mb = %[10]d
  storage_memory_mb   = 300
  nomad_address       = %[1]q
  consul_address      = %[2]q
  consul_prefix       = %[11]q
  placer_http_port    = %[3]d
  placer_proxy_port   = %[4]d
  blob_s3_port        = %[5]d
  blob_admin_port     = %[6]d
  replicas            = 2
  blob_access_key     = "tf-blob"
  blob_secret_key     = "tf-blob-secret"
  storage_access_key  = "tf-storage"
  storage_secret_key  = "tf-storage-secret"
  placer_token        = %[16]q
}

resource "harvest_placer_policy" "p" {
  max_classes = 4
  replicas    = 2
  diversity   = "degraded"
  weights = {
    long = { constant = %[12]v, periodic = 2, unpredictable = 1 }
  }
  depends_on = [harvest_platform.p]
}

resource "harvest_tenant" "search" {
  environment = "search"
  function    = "frontend"
  storage_mb  = %[13]d
  reserve_cpu = 0.5
  depends_on  = [harvest_platform.p]
}

resource "harvest_blob_bucket" "b" {
  name          = "tf-datasets"
  replicas      = %[14]d
  diversity     = "degraded"
  %[17]s
  force_destroy = true
  depends_on    = [harvest_platform.p]
}

data "harvest_blob_repair_state" "r" {
  depends_on = [harvest_platform.p]
}

%[15]s
`, cluster.NomadAddr(), cluster.ConsulAddr(), p.placerHTTP, p.placerProxy, p.blobS3, p.blobAdmin, bin,
		filepath.Join(stack, "minio"), filepath.Join(cluster.RunDir, "tf-storage"), s.capacityMB, tfPrefix,
		s.constantWeight, s.tenantStorageMB, s.bucketReplicas, classes, placerToken, read)
}

// TestTerraformProviderManagesThePlatform runs the provider in-process under
// terraform-plugin-testing against the real local cluster and the real
// Terraform binary: create, update, drift, import and destroy of every
// resource, each apply followed by the framework's empty-plan check.
func TestTerraformProviderManagesThePlatform(t *testing.T) {
	t.Setenv("TF_ACC", "1")
	t.Setenv("TF_ACC_TERRAFORM_PATH", filepath.Join(stack, "terraform"))
	if isOpenTofu(t) {
		// OpenTofu resolves "harvest" under its own registry host
		t.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	}
	for _, kv := range terraformEnv(t) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, j := range []string{"harvest-placer", "harvest-blob", "harvest-storage"} {
		purgeJob(t, j)
	}
	searchNode := clientOfTenant(t, "search/frontend")
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"harvest": providerserver.NewProtocol6WithError(provider.New("test")()),
	}
	first := tfSettings{capacityMB: 2048, tenantStorageMB: 2048, bucketReplicas: 2, constantWeight: 3}
	second := tfSettings{capacityMB: 3072, tenantStorageMB: 4096, bucketReplicas: 3, constantWeight: 4, withClasses: true, bucketRead: "redirect"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if err := eventually(30*time.Second, func() error { return platformGone(t) }); err != nil {
				return err
			}
			return eventually(30*time.Second, func() error {
				if v, ok := nodeMetaOf(t, searchNode)["harvest_storage_mb"]; ok {
					return fmt.Errorf("%s still has harvest_storage_mb=%s after the tenant was destroyed", searchNode, v)
				}
				return nil
			})
		},
		Steps: []resource.TestStep{
			{
				Config: providerConfig(t, first),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("harvest_platform.p", "id", "harvest"),
					resource.TestCheckResourceAttr("harvest_platform.p", "health_timeout", "5m"),
					resource.TestCheckResourceAttr("harvest_tenant.search", "id", "search/frontend"),
					resource.TestCheckResourceAttr("harvest_placer_policy.p", "weights.long.constant", "3"),
					resource.TestCheckResourceAttr("data.harvest_blob_repair_state.r", "nodes.#", fmt.Sprint(len(cluster.NomadClients))),
					resource.TestCheckResourceAttr("data.harvest_blob_repair_state.r", "replicas", "2"),
					platformHealthy(t, "2048"),
					tenantMeta(t, searchNode, "2048"),
					bucketTag(t, "tf-datasets", "harvest-replicas", "2"),
					bucketTag(t, "tf-datasets", "harvest-read", ""),
				),
			},
			{
				// update every resource: the storage job rolls to the new
				// capacity, the others change in place
				PreConfig: func() { classifyTenants(t) },
				Config:    providerConfig(t, second),
				Check: resource.ComposeAggregateTestCheckFunc(
					platformHealthy(t, "3072"),
					tenantMeta(t, searchNode, "4096"),
					bucketTag(t, "tf-datasets", "harvest-replicas", "3"),
					bucketTag(t, "tf-datasets", "harvest-read", "redirect"),
					resource.TestCheckResourceAttr("harvest_placer_policy.p", "weights.long.constant", "4"),
					resource.TestCheckResourceAttrSet("data.harvest_classes.c", "generated"),
					resource.TestCheckResourceAttr("data.harvest_classes.c", "unclassified.#", "0"),
					resource.TestCheckResourceAttrWith("data.harvest_classes.c", "classes.#", atLeast(1)),
					classesListTheirNodes,
				),
			},
			{
				// drift: an operator re-runs the placer job by hand with other
				// variables and deletes the tenant's declaration; the next plan
				// sees both, and the apply puts them back
				PreConfig: func() {
					rerunPlacerByHand(t, "# edited by hand\n")
					deleteTenantByHand(t, "search/frontend")
				},
				Config:             providerConfig(t, second),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: providerConfig(t, second),
				Check: resource.ComposeAggregateTestCheckFunc(
					platformHealthy(t, "3072"),
					tenantMeta(t, searchNode, "4096"),
					placerExtraConfig(t, ""),
				),
			},
			{ResourceName: "harvest_platform.p", ImportState: true, ImportStateId: "harvest", ImportStateVerify: true},
			{ResourceName: "harvest_tenant.search", ImportState: true, ImportStateId: "search/frontend", ImportStateVerify: true},
			{ResourceName: "harvest_placer_policy.p", ImportState: true, ImportStateId: "policy", ImportStateVerify: true},
			{ResourceName: "harvest_blob_bucket.b", ImportState: true, ImportStateId: "tf-datasets", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"force_destroy"}},
		},
	})
}

// platformHealthy: one passing storage node per client, registered with the
// capacity asked for, and the front and the placer passing.
func platformHealthy(t *testing.T, capacity string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		caps := storageCapacities(t)
		if len(caps) != len(cluster.NomadClients) {
			return fmt.Errorf("%d passing storage nodes, want %d: %v", len(caps), len(cluster.NomadClients), caps)
		}
		for node, c := range caps {
			if c != capacity {
				return fmt.Errorf("storage node %s registered capacity_mb %s, want %s", node, c, capacity)
			}
		}
		for _, s := range []string{"harvest-blob", "harvest-blob-admin", "harvest-placer", "harvest-placer-proxy"} {
			if n := passing(t, s); n != 1 {
				return fmt.Errorf("%d passing instances of %s, want 1", n, s)
			}
		}
		return nil
	}
}

// tenantMeta: the placer published the tenant's declared storage on its node.
func tenantMeta(t *testing.T, node, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return eventually(30*time.Second, func() error {
			if got := nodeMetaOf(t, node)["harvest_storage_mb"]; got != want {
				return fmt.Errorf("%s: harvest_storage_mb = %q, want %q", node, got, want)
			}
			return nil
		})
	}
}

// bucketTag reads one of the bucket's tags through the front as any S3
// client would ("" when it is not set).
func bucketTag(t *testing.T, bucket, tag, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		s3, err := minio.New(fmt.Sprintf("127.0.0.1:%d", terraformPorts().blobS3), &minio.Options{Creds: credentials.NewStaticV4("tf-blob", "tf-blob-secret", "")})
		if err != nil {
			return err
		}
		tags, err := s3.GetBucketTagging(context.Background(), bucket)
		if err != nil {
			return err
		}
		if got := tags.ToMap()[tag]; got != want {
			return fmt.Errorf("bucket %s: %s = %q, want %q", bucket, tag, got, want)
		}
		return nil
	}
}

// classifyTenants imports ten days of history for every client's tenant
// under the test's prefix and refreshes the deployed placer's classes.
func classifyTenants(t *testing.T) {
	now := time.Now().UTC().Truncate(history.Slot)
	start := now.Add(-10 * 24 * time.Hour)
	series := map[history.TenantID]history.Series{}
	for i := range cluster.NomadClients {
		id := tenantOf(t, i)
		if i%2 == 0 {
			series[id] = flatSeries(20+float64(i), start, 10, uint64(i+1))
		} else {
			series[id] = synth.PatternSeries(uint64(i+1), synth.Periodic, start, 10)
		}
	}
	importHistory(t, tfPrefix, series)
	harvestCLI(t, "harvestctl", "classes", "refresh", "-placer-addr", fmt.Sprintf("127.0.0.1:%d", terraformPorts().placerHTTP))
}

// classesListTheirNodes: the harvest_classes data source gives each class
// the Nomad nodes that carry its label (it once gave every class none), and
// they are the cluster's nodes.
func classesListTheirNodes(s *terraform.State) error {
	rs, ok := s.RootModule().Resources["data.harvest_classes.c"]
	if !ok {
		return fmt.Errorf("no data.harvest_classes.c in the state")
	}
	names := map[string]bool{}
	for _, c := range cluster.NomadClients {
		names[c.Name] = true
	}
	listed := 0
	for k, v := range rs.Primary.Attributes {
		if strings.HasPrefix(k, "classes.") && strings.Contains(k, ".nodes.") && !strings.HasSuffix(k, ".#") {
			if !names[v] {
				return fmt.Errorf("%s = %q is no node of the cluster", k, v)
			}
			listed++
		}
	}
	if listed == 0 {
		return fmt.Errorf("no class lists a node")
	}
	return nil
}

func atLeast(n int) resource.CheckResourceAttrWithFunc {
	return func(v string) error {
		var got int
		if _, err := fmt.Sscan(v, &got); err != nil || got < n {
			return fmt.Errorf("%q, want at least %d", v, n)
		}
		return nil
	}
}
