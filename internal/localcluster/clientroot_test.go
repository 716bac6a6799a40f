package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/pathaccess"
)

// A run folder whose parents are closed to the tasks' user keeps the Nomad
// clients' folders elsewhere, where that user can pass; an open one keeps
// them in the run folder.
func TestClientRootLeavesARunFolderTheTaskUserCannotPass(t *testing.T) {
	base := t.TempDir() // the testing package makes it 0700: a private home
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	runDir := filepath.Join(base, "clone", ".run", "cluster")

	// base is 0700: nobody can reach neither the run folder nor TMPDIR
	_, err := clientRootFor(runDir, hclog.NewNullLogger())
	if err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), TaskUser) || !strings.Contains(err.Error(), "chmod o+x") {
		t.Fatalf("a cluster nobody can reach anywhere: %v, want an error naming %s, %s and the fix", err, base, TaskUser)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("left %d folders in TMPDIR after refusing", len(left))
	}

	// a private clone (0700) under a passable parent, TMPDIR passable
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(base), 0o711); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(base, "clone")
	if err := os.Chmod(clone, 0o700); err != nil {
		t.Fatal(err)
	}
	root, err := clientRootFor(runDir, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(root, tmp+"/") {
		t.Fatalf("client root %s, want a folder under TMPDIR %s", root, tmp)
	}
	nobody, err := pathaccess.LookupUser(TaskUser)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := pathaccess.FirstBlocked(root, nobody); err != nil || b != nil {
		t.Fatalf("%s cannot pass the client root: %v %v", TaskUser, b, err)
	}

	// an open clone keeps everything in the run folder
	if err := os.Chmod(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	if root, err := clientRootFor(runDir, hclog.NewNullLogger()); err != nil || root != runDir {
		t.Fatalf("client root %s (%v), want the run folder %s", root, err, runDir)
	}
}
