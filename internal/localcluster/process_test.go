package localcluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/hostsweep"
	"github.com/harvest-platform/harvest/internal/portclaim"
)

func sleeper(t *testing.T, dir string) *Agent {
	t.Helper()
	bin, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	bin, _ = filepath.EvalSymlinks(bin)
	a := &Agent{Name: "sleeper", Binary: bin, Dir: dir, Log: filepath.Join(dir, "logs", "sleeper.log")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := startAgent(a, os.Environ(), false, "300"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopPID(a.PID, a.Binary, time.Second) })
	return a
}

func TestStartAndStopAgent(t *testing.T) {
	dir := t.TempDir()
	a := sleeper(t, dir)
	if !hostsweep.Alive(a.PID, a.Binary) {
		t.Fatalf("pid %d not alive after start", a.PID)
	}
	if hostsweep.Alive(a.PID, "/bin/false-binary") {
		t.Fatalf("pid %d matched a binary it does not run", a.PID)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "sleeper.pid")); err != nil {
		t.Fatalf("no pid file: %v", err)
	}
	if !stopPID(a.PID, a.Binary, 5*time.Second) {
		t.Fatalf("pid %d survived stop", a.PID)
	}
	if hostsweep.Alive(a.PID, a.Binary) {
		t.Fatalf("pid %d still alive (or a zombie counted as alive)", a.PID)
	}
}

func TestSweepStaleTearsDownClusterOfDeadOwner(t *testing.T) {
	claimDir, runDir := t.TempDir(), t.TempDir()
	a := sleeper(t, filepath.Join(runDir, "consul-server"))
	// The owner is a process that has already exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	_, path, err := claimBlock(claimDir, portclaim.Claim{RunDir: runDir, Owner: dead.Process.Pid})
	if err != nil {
		t.Fatal(err)
	}
	s := &State{RunDir: runDir, ClaimFile: path, ConsulServer: *a}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	SweepStale(context.Background(), claimDir, nil)
	if hostsweep.Alive(a.PID, a.Binary) {
		t.Fatalf("orphaned agent %d still runs after SweepStale", a.PID)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("stale claim %s not released: %v", path, err)
	}
	if _, err := os.Stat(filepath.Join(runDir, "consul-server")); !os.IsNotExist(err) {
		t.Fatalf("agent dir not removed: %v", err)
	}
}
