package hostsweep

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// sleeper starts a sleep working in dir and returns its pid.
func sleeper(t *testing.T, dir string) int {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "300")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

func TestStrayPIDsFindsProcessesWorkingInRunDir(t *testing.T) {
	runDir := t.TempDir()
	pid := sleeper(t, filepath.Join(runDir, "alloc", "task"))
	got := StrayPIDs([]string{runDir}, nil)
	found := false
	for _, p := range got {
		found = found || p == pid
		if p == os.Getpid() {
			t.Fatalf("the sweeper lists itself")
		}
	}
	if !found {
		t.Fatalf("stray sleeper %d not found in %v", pid, got)
	}
	if others := StrayPIDs([]string{t.TempDir()}, nil); len(others) != 0 {
		t.Fatalf("empty run dir has strays: %v", others)
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
	if NomadAgentRunning() {
		t.Skip("a nomad agent already runs on this machine")
	}
	cmd := exec.Command(nomad, "agent")
	cmd.Args, cmd.Dir = []string{nomad, "agent"}, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the shell and its sleep, killed together
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	if !NomadAgentRunning() {
		t.Fatal("a running nomad agent was not seen")
	}
}
