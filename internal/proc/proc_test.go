package proc

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestAZombieDoesNotRun: a child that exited and was not reaped yet still
// answers kill(pid, 0), but does not run; a sleeping one runs.
func TestAZombieDoesNotRun(t *testing.T) {
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	if comm, running := Stat(sleeper.Process.Pid); !running || comm != "sleep" {
		t.Fatalf("a sleeping child: %q running=%v", comm, running)
	}
	quick := exec.Command("true")
	if err := quick.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = quick.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for Running(quick.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("the exited child still runs after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(quick.Process.Pid)); err != nil {
		t.Fatalf("the zombie should still be in /proc until it is reaped: %v", err)
	}
	if Running(0) || Running(-1) {
		t.Fatal("pid 0 or -1 runs")
	}
}
