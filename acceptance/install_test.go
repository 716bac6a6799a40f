//go:build acceptance

package acceptance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bareRun says the package runs on a cluster of agents only (make
// acceptance-install), as an operator's cluster is before Harvest.
func bareRun() bool { return os.Getenv("HARVEST_ACCEPTANCE_BARE") != "" }

// guideBlocks are the sh code blocks of a Markdown guide, in order.
func guideBlocks(markdown string) []string {
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```").FindAllStringSubmatch(markdown, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestInstallGuideBringsUpThePlatform follows docs/install.md literally on
// a bare cluster: every sh block, in order, in one bash with the guide's
// own error handling, with only the guide's documented settings (where the
// binaries, jobs and history export are, the ports) from the environment.
// Then it checks what the guide promised: storage nodes healthy in Consul,
// the placer's classes on the nodes, the first harvested job admitted with
// a kept decision and completed, the dataset read back.
func TestInstallGuideBringsUpThePlatform(t *testing.T) {
	if !bareRun() {
		t.Skip("runs on a bare cluster: make acceptance-install")
	}
	work, script, env, out := installPlatform(t)

	text := string(out)
	if !strings.Contains(text, "dataset read back identical") {
		t.Errorf("the guide's S3 step did not read the dataset back")
	}
	if !regexp.MustCompile(`client-\d: class \S+ \((periodic|constant|unpredictable)\)`).MatchString(text) {
		t.Errorf("no node got a class and pattern from the imported history")
	}
	if !strings.Contains(text, "Algorithm 1: fit ") {
		t.Errorf("harvestctl explain job did not show the proxy's decision")
	}
	entries, _, err := consulAPI(t, cluster.ConsulAddr()).Health().Service("harvest-storage", "", true, nil)
	if err != nil || len(entries) != len(cluster.NomadClients) {
		t.Errorf("%d healthy storage nodes (%v), want one per client (%d)", len(entries), err, len(cluster.NomadClients))
	}
	job, _, err := nomadClient(t).Jobs().Info("harvest-batch", nil)
	if err != nil || job.Meta["harvest_job_type"] == "" {
		t.Fatalf("the first harvested job was not admitted through the proxy: %v %v", err, job)
	}
	waitCompleted(t, "harvest-batch", 3, 3*time.Minute)

	// An operator who runs the guide again (to add a client, or after an
	// upgrade) keeps the keys the platform runs with: the same commands pass
	// again and the dataset still reads back, with the same S3 keys.
	keys := func() string {
		v, _, err := nomadClient(t).Variables().Read("nomad/jobs/harvest-blob", nil)
		if err != nil {
			t.Fatal(err)
		}
		return v.Items["access_key"] + "/" + v.Items["secret_key"]
	}
	before := keys()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel2()
	again := exec.CommandContext(ctx2, "bash", "-c", script)
	again.Dir, again.Env = work, env
	out, err = again.CombinedOutput()
	t.Logf("the guide run a second time printed:\n%s", out)
	if err != nil {
		t.Fatalf("following docs/install.md a second time failed: %v", err)
	}
	if !strings.Contains(string(out), "dataset read back identical") {
		t.Errorf("the second run did not read the dataset back")
	}
	if after := keys(); after != before {
		t.Errorf("the second run changed the front's S3 keys")
	}
}

// installPlatform follows docs/install.md literally on the bare cluster:
// every sh block, in order, in one bash with the guide's own error handling,
// with only the guide's documented settings (where the binaries, jobs and
// history export are, the ports) from the environment. It returns the
// folder it ran in, the script and environment (to run it again) and what
// it printed; a failure fails the test.
func installPlatform(t *testing.T) (work, script string, env []string, out []byte) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := guideBlocks(string(guide))
	if len(blocks) < 8 {
		t.Fatalf("docs/install.md has %d sh blocks; the guide lost its steps", len(blocks))
	}
	work = t.TempDir()
	// the operator's monitoring export: a month of each tenant's CPU
	args := []string{"history", "synth", "-seed", "11", "-tenants", "3", "-days", "30", "-out", work}
	patterns := []string{"periodic", "constant", "unpredictable"}
	for i, c := range cluster.NomadClients {
		args = append(args, "-tenant", c.Meta["harvest_tenant"]+"="+patterns[i%len(patterns)])
	}
	harvestCLI(t, "harvestctl", args...)

	for _, job := range []string{"harvest-batch", "harvest-placer", "harvest-blob", "harvest-storage"} {
		purgeJob(t, job)
	}
	env = clientEnv(
		"NOMAD_ADDR="+cluster.NomadAddr(), "CONSUL_HTTP_ADDR="+cluster.ConsulAddr(),
		"HARVEST_BIN="+bin, "HARVEST_JOBS="+filepath.Join(root, "jobs"), "MINIO="+filepath.Join(stack, "minio"),
		"STORAGE_ROOT="+filepath.Join(cluster.RunDir, "install-storage"), "HISTORY_CSV="+filepath.Join(work, "series.csv.gz"),
		"PLACER_PORT="+strconv.Itoa(cluster.SparePort(0)), "PROXY_PORT="+strconv.Itoa(cluster.SparePort(1)),
		"S3_PORT="+strconv.Itoa(cluster.SparePort(2)), "BLOB_ADMIN_PORT="+strconv.Itoa(cluster.SparePort(3)),
		"PATH="+stack+":"+os.Getenv("PATH"), "NOMAD_CLI_SHOW_HINTS=false")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	script = "set -euo pipefail\n" + strings.Join(blocks, "\n")
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = work, env
	start := time.Now()
	out, err = cmd.CombinedOutput()
	t.Logf("the guide's commands took %s and printed:\n%s", time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("following docs/install.md failed: %v", err)
	}
	return work, script, env, out
}
