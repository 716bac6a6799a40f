//go:build acceptance

package acceptance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/internal/pathaccess"
)

// demoRun says the package runs `make demo` itself (make acceptance-demo):
// the demo starts its own cluster, so TestMain starts none.
func demoRun() bool { return os.Getenv("HARVEST_ACCEPTANCE_DEMO") != "" }

// TestDemoFromAPrivateCloneTwice runs scripts/demo.sh (make demo) as a
// newcomer would from a clone inside a home folder of mode 0700, which the
// harvested tasks' user cannot pass, then again on the cluster the first run
// left running. Both runs must pass: the harvested tasks start on client-1,
// the dataset reads back, and the second run reuses the cluster and the
// platform installed on it.
func TestDemoFromAPrivateCloneTwice(t *testing.T) {
	if !demoRun() {
		t.Skip("runs make demo's flow on a cluster of its own: make acceptance-demo")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(home, "clone", ".run", "cluster")
	t.Cleanup(func() {
		out, err := exec.Command(filepath.Join(bin, "harvest-dev"), "dev-cluster", "down", "-run-dir", runDir).CombinedOutput()
		if err != nil {
			t.Errorf("dev-cluster down: %v\n%s", err, out)
		}
	})
	for run := 1; run <= 2; run++ {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "demo.sh"))
		cmd.Env = append(os.Environ(), "RUN_DIR="+runDir)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		t.Logf("make demo, run %d, took %s and printed:\n%s", run, time.Since(start).Round(time.Second), out)
		if err != nil {
			t.Fatalf("make demo, run %d: %v", run, err)
		}
		text := string(out)
		for _, want := range []string{"demo-harvest-3 running on client-1", "dataset read back identical"} {
			if !strings.Contains(text, want) {
				t.Errorf("run %d did not say %q", run, want)
			}
		}
		if run == 2 && !strings.Contains(text, "Reusing the cluster already running") {
			t.Errorf("the second run did not reuse the cluster the first left running")
		}
	}
	// the clients' task directories are where nobody can reach them
	s, err := localcluster.Load(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(s.ClientRoot, home+"/") {
		t.Errorf("the clients' folders stayed under the 0700 home folder: %s", s.ClientRoot)
	}
	nobody, err := pathaccess.LookupUser(localcluster.TaskUser)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.NomadClients {
		if b, err := pathaccess.FirstBlocked(filepath.Join(c.Dir, "data"), nobody); err != nil || b != nil {
			t.Errorf("%s cannot reach %s's data_dir: %v %v", localcluster.TaskUser, c.Name, b, err)
		}
	}
}
