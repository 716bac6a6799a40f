//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// TestTerraformExampleBringsUpThePlatform: `terraform init && terraform
// apply` of terraform/examples/local, with the real Terraform binary and the
// provider installed from the filesystem mirror (offline), brings up the
// placer, the blob front and one storage node per client, healthy in Consul;
// a dataset PUT through the front reads back; a second plan is empty; and
// `terraform destroy` removes it all.
// planCounts is terraform plan's summary line of resource changes.
var planCounts = regexp.MustCompile(`Plan: (\d+) to add, (\d+) to change, (\d+) to destroy`)

func TestTerraformExampleBringsUpThePlatform(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{"harvest-placer", "harvest-blob", "harvest-storage"} {
		purgeJob(t, j)
	}
	// a copy, so that .terraform, the lock file and the state stay out of
	// the checkout
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "terraform"), os.DirFS(filepath.Join(root, "terraform"))); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "terraform", "examples", "local")
	p := terraformPorts()
	ports, _ := json.Marshal(map[string]int{"placer_http": p.placerHTTP, "placer_proxy": p.placerProxy, "blob_s3": p.blobS3, "blob_admin": p.blobAdmin})
	env := append(terraformEnv(t),
		"TF_VAR_repo_root="+root,
		"TF_VAR_nomad_address="+cluster.NomadAddr(),
		"TF_VAR_consul_address="+cluster.ConsulAddr(),
		"TF_VAR_consul_prefix=harvest-example/",
		"TF_VAR_storage_data_root="+filepath.Join(cluster.RunDir, "example-storage"),
		"TF_VAR_ports="+string(ports),
		"TF_VAR_placer_token="+placerToken,
	)
	tf := func(args ...string) (string, error) { return runTerraform(t, dir, env, args...) }
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			_, _ = tf("destroy", "-auto-approve")
		}
	})

	if out, err := tf("init"); err != nil || !strings.Contains(out, "Installed harvest-platform/harvest v0.1.0") {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	start := time.Now()
	if out, err := tf("apply", "-auto-approve"); err != nil {
		t.Fatalf("terraform apply: %v\n%s", err, out)
	}
	t.Logf("terraform apply took %s", time.Since(start).Round(time.Second))
	if err := platformHealthy(t, "2048")(nil); err != nil {
		t.Fatal(err)
	}

	// a dataset through the front, as any S3 client writes and reads it
	s3, err := minio.New(fmt.Sprintf("127.0.0.1:%d", p.blobS3), &minio.Options{Creds: credentials.NewStaticV4("harvest-local", "harvest-local-secret", "")})
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("harvested dataset\n"), 50_000)
	ctx := context.Background()
	if _, err := s3.PutObject(ctx, "datasets", "day-1/part-0.csv", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("PUT through the front: %v", err)
	}
	obj, err := s3.GetObject(ctx, "datasets", "day-1/part-0.csv", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GET through the front: %d bytes, err %v; want the %d bytes put", len(got), err, len(body))
	}

	// no resource may change; outputs may, where they show live state read
	// by a data source (a storage node's grid cell follows its tenant's
	// measured peak CPU, which can move between the apply and the plan)
	out, err := tf("plan", "-detailed-exitcode")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 2 {
		if m := planCounts.FindStringSubmatch(out); (m != nil && m[1]+m[2]+m[3] != "000") || !strings.Contains(out, "Changes to Outputs:") {
			t.Fatalf("plan right after apply wants changes:\n%s", out)
		}
		t.Logf("plan right after apply changes outputs only (live state read by data sources):\n%s", out)
	} else if err != nil {
		t.Fatalf("terraform plan: %v\n%s", err, out)
	}
	out, err = tf("output", "-json", "storage_nodes")
	if err != nil || strings.Count(out, "up=true") != len(cluster.NomadClients) {
		t.Fatalf("output storage_nodes: %v\n%s", err, out)
	}

	if out, err := tf("destroy", "-auto-approve"); err != nil {
		t.Fatalf("terraform destroy: %v\n%s", err, out)
	}
	destroyed = true
	if err := eventually(30*time.Second, func() error { return platformGone(t) }); err != nil {
		t.Fatal(err)
	}
}

// runTerraform runs the stack's terraform in dir with env, without colour
// or prompts, and returns its combined output.
func runTerraform(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	args = append([]string{args[0], "-no-color"}, args[1:]...) // TF_INPUT=0 keeps it from prompting
	cmd := exec.Command(filepath.Join(stack, "terraform"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("terraform %s: exit %v", strings.Join(args, " "), cmd.ProcessState.ExitCode())
	return string(out), err
}
