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

	consulapi "github.com/hashicorp/consul/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// TestEveryShippedJobValidates: `nomad job validate` accepts every job in jobs/.
func TestEveryShippedJobValidates(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "jobs", "*.nomad.hcl"))
	examples, _ := filepath.Glob(filepath.Join(root, "jobs", "examples", "*.nomad.hcl"))
	files = append(files, examples...)
	if len(files) < 3 {
		t.Fatalf("jobs/ holds %d job files", len(files))
	}
	for _, f := range files {
		if out := nomadCLI(t, "job", "validate", f); !strings.Contains(out, "Job validation successful") {
			t.Fatalf("%s: %s", f, out)
		}
	}
}

// TestStorageSystemJobRunsAMinIOOnEveryHarvestedClient: jobs/harvest-storage
// runs one MinIO server on every client, each with credentials of its own
// from a Nomad variable, registered healthy in Consul with its tenant,
// environment, rack and capacity; each serves S3 with its own credentials
// and refuses another node's.
func TestStorageSystemJobRunsAMinIOOnEveryHarvestedClient(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	keys := func(node string) (string, string) {
		k := strings.ReplaceAll(node, "-", "_")
		return "access-" + k, "secret-" + k + "-123"
	}
	args := []string{"var", "put", "-force", "nomad/jobs/harvest-storage"}
	for _, c := range cluster.NomadClients {
		a, s := keys(c.Name)
		k := strings.ReplaceAll(c.Name, "-", "_")
		args = append(args, k+"_access_key="+a, k+"_secret_key="+s)
	}
	nomadCLI(t, args...)
	t.Cleanup(func() { nomadCLI(t, "var", "purge", "nomad/jobs/harvest-storage") })
	purgeJob(t, "harvest-storage")
	nomadCLI(t, "job", "run", "-detach", "-var", "minio_path="+filepath.Join(stack, "minio"),
		"-var", "data_root="+filepath.Join(cluster.RunDir, "storage-job"), "-var", "capacity_mb=2048", "-var", "memory_mb=512",
		filepath.Join(root, "jobs", "harvest-storage.nomad.hcl"))
	consul := consulAPI(t, cluster.ConsulAddr())
	var entries []*consulapi.ServiceEntry
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		entries, _, err = consul.Health().Service("harvest-storage", "", true, nil)
		if err == nil && len(entries) == len(cluster.NomadClients) {
			break
		}
	}
	if len(entries) != len(cluster.NomadClients) {
		t.Fatalf("%d healthy harvest-storage instances, want one per client (%d): %v", len(entries), len(cluster.NomadClients), err)
	}
	byNode := map[string]map[string]string{}
	for _, c := range cluster.NomadClients {
		byNode[c.Name] = c.Meta
	}
	for _, e := range entries {
		m := e.Service.Meta
		want, ok := byNode[m["node"]]
		if !ok || m["tenant"] != want["harvest_tenant"] || m["environment"] != want["harvest_environment"] ||
			m["rack"] != want["harvest_rack"] || m["capacity_mb"] != "2048" {
			t.Fatalf("instance on %s registered %v, node meta %v", m["node"], m, want)
		}
		delete(byNode, m["node"])
		addr := fmt.Sprintf("%s:%d", e.Service.Address, e.Service.Port)
		ctx := context.Background()
		other := cluster.NomadClients[0].Name
		if other == m["node"] {
			other = cluster.NomadClients[1].Name
		}
		oa, os_ := keys(other)
		wrong, _ := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(oa, os_, "")})
		if _, err := wrong.ListBuckets(ctx); minio.ToErrorResponse(err).Code != "InvalidAccessKeyId" {
			t.Fatalf("storage node %s accepted %s's keys: %v", m["node"], other, err)
		}
		a, sk := keys(m["node"])
		s3, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(a, sk, "")})
		if err != nil {
			t.Fatal(err)
		}
		if err := s3.MakeBucket(ctx, "probe", minio.MakeBucketOptions{}); err != nil {
			t.Fatalf("storage node %s (%s): %v", m["node"], addr, err)
		}
		if _, err := s3.PutObject(ctx, "probe", "x", bytes.NewReader([]byte("stored")), 6, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		obj, _ := s3.GetObject(ctx, "probe", "x", minio.GetObjectOptions{})
		if got, err := io.ReadAll(obj); err != nil || string(got) != "stored" {
			t.Fatalf("read back %q %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(cluster.RunDir, "storage-job", m["node"], "probe")); err != nil {
			t.Fatalf("the node's data is not in data_root/<node>: %v", err)
		}
	}
	nomadCLI(t, "job", "stop", "-purge", "harvest-storage")
}
