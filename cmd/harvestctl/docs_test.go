package main

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every `harvestctl ...` command the docs and the README tell an operator
// to type is one harvestctl has: the longest run of its lower-case words
// names a registered command, and not a group the next word is no
// subcommand of (`history format` was documented and, after a move, no
// longer registered).
func TestEveryCommandTheDocsNameExists(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	cmds := commands()
	use := regexp.MustCompile("`harvestctl((?: [a-z][a-z-]*)+)")
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range use.FindAllStringSubmatch(string(data), -1) {
			words := strings.Fields(m[1])
			n := len(words)
			for ; n > 0; n-- {
				if _, ok := cmds[strings.Join(words[:n], " ")]; ok {
					break
				}
			}
			// a group followed by a word that is none of its subcommands
			group := n > 0 && n < len(words) && slices.ContainsFunc(slices.Collect(maps.Keys(cmds)), func(k string) bool {
				return strings.HasPrefix(k, strings.Join(words[:n], " ")+" ")
			})
			if n == 0 || group {
				t.Errorf("%s: `harvestctl%s`: no such command", filepath.Base(f), m[1])
			}
			seen++
		}
	}
	if seen < 10 {
		t.Fatalf("only %d harvestctl commands found in the docs: is the pattern right?", seen)
	}
}
