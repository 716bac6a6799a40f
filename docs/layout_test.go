package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// development.md's layout table has a row for every Go package of the
// module (generated protobuf code as plugins/*/proto), and no row for a
// folder that holds none.
func TestLayoutTableListsEveryPackage(t *testing.T) {
	rows := map[string]bool{}
	rowRE := regexp.MustCompile("^\\| `([^`]+)`(?:, `([^`]+)`)? \\|")
	for _, line := range proseLines(t, "development.md") {
		if m := rowRE.FindStringSubmatch(line); m != nil {
			rows[m[1]] = true
			if m[2] != "" {
				rows[m[2]] = true
			}
		}
	}
	packages := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin" || name == "out") {
			return filepath.SkipDir
		}
		if d.IsDir() && path != ".." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own (stack/)
			}
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, _ := filepath.Rel("..", filepath.Dir(path))
			if rel != "." {
				packages[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range packages {
		if strings.HasPrefix(p, "plugins/") && strings.HasSuffix(p, "/proto") {
			p = "plugins/*/proto"
		}
		if !rows[p] {
			t.Errorf("development.md's layout table has no row for package %s", p)
		}
	}
	for r := range rows {
		if strings.Contains(r, "*") || strings.ContainsAny(r, " .") {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", r)); err == nil && !packages[r] {
			t.Errorf("development.md lists %s, which holds no Go package", r)
		}
	}
}
