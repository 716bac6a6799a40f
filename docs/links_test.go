package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	headingRE = regexp.MustCompile(`^#+ (.*)$`)
)

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, line := range proseLines(t, file) {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			s := slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
			out[strings.ReplaceAll(s, " ", "-")] = true
		}
	}
	return out
}

// proseLines are a Markdown file's lines outside fenced code blocks.
func proseLines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		} else {
			out = append(out, "")
		}
	}
	return out
}

// Every relative link of the README and docs/ leads to a file that exists,
// and to a heading of it when it names one.
func TestLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md")
	for _, f := range files {
		for i, line := range proseLines(t, f) {
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: %v", f, i+1, target, err)
					continue
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with that anchor", f, i+1, target, dest)
				}
			}
		}
	}
}
