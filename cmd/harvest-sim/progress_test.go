package main

import (
	"strings"
	"testing"
)

func TestProgressOffATerminalPrintsALineAtEachTenth(t *testing.T) {
	p := &progressLines{tenth: map[string]int{}}
	var out strings.Builder
	for done := 0; done <= 1000; done++ {
		p.report(&out, "108 runs", done, 1000)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 10 || lines[0] != "108 runs: 10%" || lines[9] != "108 runs: 100%" {
		t.Fatalf("got %d lines %q, want 10 from 10%% to 100%%", len(lines), lines)
	}
	p.report(&out, "108 runs", 1000, 1000)
	if strings.Count(out.String(), "\n") != 10 {
		t.Fatal("a tenth already printed was printed again")
	}
}
