package portclaim

import (
	"errors"
	"os"
	"testing"
)

// testRange is the local clusters' range.
var testRange = Range{Start: 15000, End: 20000, Size: 100}

func TestTakeGivesEachRunItsOwnBlock(t *testing.T) {
	dir := t.TempDir()
	a, pathA, err := testRange.Take(dir, Claim{RunDir: "/run/a", Owner: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	b, pathB, err := testRange.Take(dir, Claim{RunDir: "/run/b", Owner: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if a == b || pathA == pathB {
		t.Fatalf("two runs share block %d", a)
	}
	claims, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if claims[pathA].RunDir != "/run/a" || claims[pathB].RunDir != "/run/b" {
		t.Fatalf("claims = %+v", claims)
	}
	// Releasing a block makes it the first one handed out again.
	os.Remove(pathA)
	c, _, err := testRange.Take(dir, Claim{RunDir: "/run/c"})
	if err != nil {
		t.Fatal(err)
	}
	if c != a {
		t.Fatalf("released block %d not reused, got %d", a, c)
	}
}

func TestTakeRefusesClearlyWhenAllAreTaken(t *testing.T) {
	dir := t.TempDir()
	for base := testRange.Start; base+testRange.Size <= testRange.End; base += testRange.Size {
		if err := os.WriteFile(Path(dir, base), []byte(`{"run_dir":"/elsewhere"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := testRange.Take(dir, Claim{RunDir: "/run/x"})
	if !errors.Is(err, ErrNoBlock) {
		t.Fatalf("err = %v, want ErrNoBlock", err)
	}
}
