package localcluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
	if !alive(a.PID, a.Binary) {
		t.Fatalf("pid %d not alive after start", a.PID)
	}
	if alive(a.PID, "/bin/false-binary") {
		t.Fatalf("pid %d matched a binary it does not run", a.PID)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "sleeper.pid")); err != nil {
		t.Fatalf("no pid file: %v", err)
	}
	if !stopPID(a.PID, a.Binary, 5*time.Second) {
		t.Fatalf("pid %d survived stop", a.PID)
	}
	if alive(a.PID, a.Binary) {
		t.Fatalf("pid %d still alive (or a zombie counted as alive)", a.PID)
	}
}

func TestStrayPIDsFindsProcessesWorkingInRunDir(t *testing.T) {
	runDir := t.TempDir()
	a := sleeper(t, filepath.Join(runDir, "alloc", "task"))
	got := strayPIDs([]string{runDir}, nil)
	found := false
	for _, pid := range got {
		found = found || pid == a.PID
		if pid == os.Getpid() {
			t.Fatalf("the sweeper lists itself")
		}
	}
	if !found {
		t.Fatalf("stray sleeper %d not found in %v", a.PID, got)
	}
	if others := strayPIDs([]string{t.TempDir()}, nil); len(others) != 0 {
		t.Fatalf("empty run dir has strays: %v", others)
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
	_, path, err := claimBlock(claimDir, claim{RunDir: runDir, Owner: dead.Process.Pid})
	if err != nil {
		t.Fatal(err)
	}
	s := &State{RunDir: runDir, ClaimFile: path, ConsulServer: *a}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	SweepStale(context.Background(), claimDir, nil)
	if alive(a.PID, a.Binary) {
		t.Fatalf("orphaned agent %d still runs after SweepStale", a.PID)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("stale claim %s not released: %v", path, err)
	}
	if _, err := os.Stat(filepath.Join(runDir, "consul-server")); !os.IsNotExist(err) {
		t.Fatalf("agent dir not removed: %v", err)
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/tmp/a\040b/c`); got != "/tmp/a b/c" {
		t.Fatalf("got %q", got)
	}
}

// A running `nomad agent` is seen, so the shared /nomad cgroups are kept
// while one runs (a shell named nomad, running a script named agent,
// stands in).
func TestANomadAgentKeepsTheSharedCgroups(t *testing.T) {
	dir := t.TempDir()
	nomad := filepath.Join(dir, "nomad")
	// /bin/sh named nomad, reading its script from a file named agent
	if err := os.Symlink("/bin/sh", nomad); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent"), []byte("sleep 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if nomadAgentRunning() {
		t.Skip("a nomad agent already runs on this machine")
	}
	cmd := exec.Command(nomad, "agent")
	cmd.Args, cmd.Dir = []string{nomad, "agent"}, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the shell and its sleep, killed together
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	if !nomadAgentRunning() {
		t.Fatal("a running nomad agent was not seen")
	}
}
