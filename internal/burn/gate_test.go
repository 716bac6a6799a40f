package burn

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// gateEnv makes this test binary, started again, a gated burner.
const gateEnv = "HARVEST_BURN_GATE_TEST"

func TestMain(m *testing.M) {
	if os.Getenv(gateEnv) != "" {
		if err := Gated(0.5, os.Stdin, os.Stdout); err != nil {
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// cpuSeconds is a process's user and system CPU time.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	p, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.CPUTime()
}

// A gated burner burns nothing between saying it is ready and its go, when
// its starter moves it into the primary's cgroup, and burns after it.
func TestGatedBurnerBurnsOnlyAfterItIsJoined(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), gateEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	var before, during float64
	joined := 0
	err := StartGated(cmd, func(pid int) error {
		joined = pid
		before = cpuSeconds(t, pid)
		time.Sleep(300 * time.Millisecond) // a burner that did not wait would use 150 ms of CPU here
		during = cpuSeconds(t, pid)
		return nil
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if joined != cmd.Process.Pid {
		t.Fatalf("joined pid %d, want the burner's %d", joined, cmd.Process.Pid)
	}
	if during-before > 0.05 { // a waiting process uses none (the clock ticks are 10 ms)
		t.Fatalf("the burner used %.2f s of CPU before its go", during-before)
	}
	for deadline := time.Now().Add(time.Minute); cpuSeconds(t, joined)-during < 0.1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the burner did not burn after its go")
		}
	}
}

func TestStartGatedRefusesAGivenStdin(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Stdin = strings.NewReader("")
	if err := StartGated(cmd, func(int) error { return nil }, time.Second); err == nil || cmd.Process != nil {
		t.Fatalf("StartGated with stdin set: %v (started: %v)", err, cmd.Process != nil)
	}
}

// A process that exits without saying it is ready is an error, not a wait.
func TestStartGatedSaysWhenTheBurnerDies(t *testing.T) {
	cmd := exec.Command("true")
	t.Cleanup(func() { _ = cmd.Wait() })
	if err := StartGated(cmd, func(int) error { t.Error("joined a burner that was never ready"); return nil }, time.Minute); err == nil {
		t.Fatal("no error for a burner that exited")
	}
}
