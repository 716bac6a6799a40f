package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// row is one row of a Markdown table whose first cell is a `name`.
type row struct {
	line  int
	name  string
	cells []string // every cell, trimmed; cells[0] is the name's cell
}

// markerRE starts a checked section: <!-- options: NAME --> or
// <!-- metrics: NAME -->.
var markerRE = regexp.MustCompile(`^<!-- (options|metrics): ([a-z0-9.-]+) -->$`)

// sections reads file's checked sections of kind: each runs from its
// marker to the next marker or heading, and holds the rows of its table.
func sections(t *testing.T, file, kind string) map[string][]row {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]row{}
	current := ""
	for i, line := range strings.Split(string(data), "\n") {
		if m := markerRE.FindStringSubmatch(line); m != nil {
			current = ""
			if m[1] == kind {
				if _, dup := out[m[2]]; dup {
					t.Fatalf("%s:%d: section %q twice", file, i+1, m[2])
				}
				current = m[2]
				out[current] = nil
			}
			continue
		}
		if strings.HasPrefix(line, "#") {
			current = ""
			continue
		}
		if current == "" || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := splitRow(line)
		out[current] = append(out[current], row{line: i + 1, name: strings.Trim(cells[0], "`"), cells: cells})
	}
	return out
}

// splitRow splits a table row on its unescaped pipes.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}
