package pathaccess

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAFolderOfMode0700BlocksOtherUsers(t *testing.T) {
	root := passableTempDir(t)
	private := filepath.Join(root, "private")
	deep := filepath.Join(private, "clone", "run")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(private)
	owner := ownerOf(t, st)
	other := User{Name: "nobody", UID: owner + 12345, GIDs: []uint32{owner + 12345}}
	b, err := FirstBlocked(deep, other)
	if err != nil {
		t.Fatal(err)
	}
	if b == nil || b.Dir != private {
		t.Fatalf("blocked at %+v, want %s", b, private)
	}
	if msg := b.Error(); !strings.Contains(msg, private) || !strings.Contains(msg, "0700") || !strings.Contains(msg, "nobody") {
		t.Fatalf("message %q does not name the folder, its mode and the user", msg)
	}
	// the owner passes; so does everyone once the folder is 0711
	if b, err := FirstBlocked(deep, User{Name: "owner", UID: owner}); err != nil || b != nil {
		t.Fatalf("owner blocked: %+v %v", b, err)
	}
	if err := os.Chmod(private, 0o711); err != nil {
		t.Fatal(err)
	}
	if b, err := FirstBlocked(deep, other); err != nil || b != nil {
		t.Fatalf("0711 still blocks: %+v %v", b, err)
	}
}

func TestGroupBitsApplyToMembersOnly(t *testing.T) {
	dir := filepath.Join(passableTempDir(t), "g")
	if err := os.Mkdir(dir, 0o710); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o710); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(dir)
	gid := groupOf(t, st)
	owner := ownerOf(t, st)
	member := User{Name: "member", UID: owner + 1, GIDs: []uint32{gid + 7, gid}}
	if b, _ := FirstBlocked(dir, member); b != nil {
		t.Fatalf("a member of the folder's group is blocked: %v", b)
	}
	stranger := User{Name: "stranger", UID: owner + 1, GIDs: []uint32{gid + 7}}
	if b, _ := FirstBlocked(dir, stranger); b == nil || b.Dir != dir {
		t.Fatalf("a stranger passes a 0710 folder: %v", b)
	}
}

func TestAMissingPathIsAnErrorNotABlock(t *testing.T) {
	b, err := FirstBlocked(filepath.Join(t.TempDir(), "nope"), User{Name: "x", UID: 4242})
	if err == nil || b != nil {
		t.Fatalf("got %v, %v; want an error", b, err)
	}
}
