package nodecgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two nodes of one cluster, and one node of two clusters, never share a
// cgroup; a node's three cgroups are distinct and name its block and node.
func TestNamesAreUniquePerBlockAndNode(t *testing.T) {
	seen := map[string]string{}
	for _, base := range []int{15000, 15100} {
		for _, node := range []string{"client-1", "client-2"} {
			n := For(base, node)
			for _, name := range []string{n.Parent, n.Primary, n.Harvested} {
				if !strings.Contains(name, node) || !strings.Contains(name, "-15") {
					t.Errorf("%q does not name its node %s and block %d", name, node, base)
				}
				if other, dup := seen[name]; dup {
					t.Errorf("%q is both %s's and %s's", name, other, node)
				}
				seen[name] = node
			}
		}
	}
}

// A cgroup that does not exist has no directories to sweep, and an empty
// path is never the hierarchy's root.
func TestDirsOfAMissingOrEmptyCgroup(t *testing.T) {
	if d := PrimaryDirs("/harvest-no-such-cgroup-primary"); len(d) != 0 {
		t.Errorf("PrimaryDirs of a missing cgroup: %v", d)
	}
	if d := dirs("", primaryControllers); d != nil {
		t.Errorf("dirs of an empty path: %v, want none (never the root)", d)
	}
	if d := HarvestedDirs(""); d != nil {
		t.Errorf("HarvestedDirs of an empty path: %v", d)
	}
}

// A client's allocation cgroups are found by the allocation IDs its alloc
// folder names; a client without allocations has none.
func TestAllocDirsOfAClientWithoutAllocations(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data", "alloc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d := AllocDirs(dir, For(15000, "client-1").Parent); len(d) != 0 {
		t.Errorf("AllocDirs of a client with no allocations: %v", d)
	}
}
