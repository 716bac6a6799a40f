package pathaccess

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func ownerOf(t *testing.T, st os.FileInfo) uint32 {
	t.Helper()
	return st.Sys().(*syscall.Stat_t).Uid
}

func groupOf(t *testing.T, st os.FileInfo) uint32 {
	t.Helper()
	return st.Sys().(*syscall.Stat_t).Gid
}

// passableTempDir is t.TempDir() with it and its parent (which the testing
// package makes 0700) open to every user's search.
func passableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
