package version

import (
	"strings"
	"testing"
)

func TestStringNamesBinaryAndVersion(t *testing.T) {
	oldPre, oldCommit := Prerelease, GitCommit
	t.Cleanup(func() { Prerelease, GitCommit = oldPre, oldCommit })

	Prerelease, GitCommit = "", "abc1234"
	got := String("harvest-blob")
	if !strings.HasPrefix(got, "harvest-blob v"+Version+" (abc1234) go") {
		t.Fatalf("String() = %q", got)
	}

	Prerelease, GitCommit = "dev", ""
	if got := Number(); got != Version+"-dev" {
		t.Fatalf("Number() = %q, want %q", got, Version+"-dev")
	}
	if strings.Contains(String("x"), "(") {
		t.Fatalf("String() shows an empty commit: %q", String("x"))
	}
}
