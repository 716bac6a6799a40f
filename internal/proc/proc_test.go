package proc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
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
	if !Exiting(quick.Process.Pid) || Exiting(sleeper.Process.Pid) || Exiting(os.Getpid()) || Exiting(-1) {
		t.Fatalf("exiting: the zombie %v, the sleeper %v, this process %v, pid -1 %v (want only the zombie)",
			Exiting(quick.Process.Pid), Exiting(sleeper.Process.Pid), Exiting(os.Getpid()), Exiting(-1))
	}
}

// This process's threads have run (the test itself) and the sum covers
// every thread: at least what the calling thread alone reports.
func TestSchedstatSumsEveryThread(t *testing.T) {
	pid := os.Getpid()
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	// the main thread's first: its time only grows, so the sum read after
	// it holds at least as much
	self, _ := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	onCPU, waiting := Schedstat(pid)
	var main int64
	fmt.Sscan(string(self), &main)
	if onCPU < 20*time.Millisecond || onCPU < time.Duration(main) || waiting < 0 {
		t.Fatalf("on CPU %s, waiting %s; the main thread alone %s", onCPU, waiting, time.Duration(main))
	}
	if c, w := Schedstat(1 << 30); c != 0 || w != 0 {
		t.Fatalf("a process that does not exist: %s %s", c, w)
	}
}

// This process's CPU time shows once it has spun: the stat fields after the
// command name are read where the kernel puts utime and stime.
func TestCPUSecondsCountsThisProcess(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for CPUSeconds(os.Getpid()) <= 0 {
		if time.Now().After(deadline) {
			t.Fatal("no CPU time after 10 s of spinning")
		}
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		}
	}
	if CPUSeconds(-1) != 0 {
		t.Fatal("CPU time of pid -1")
	}
}

// A thread that spins between two reads of its own schedstat sees at least
// the time it spun on a CPU, and a wait that never shrinks.
func TestThreadSchedstatCountsTheThreadsOwnTime(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	on0, wait0, err := ThreadSchedstat()
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
	}
	on1, wait1, err := ThreadSchedstat()
	if err != nil {
		t.Fatal(err)
	}
	if on1-on0 <= 0 || wait1 < wait0 {
		t.Fatalf("on CPU %v -> %v, waiting %v -> %v: want more time on a CPU and no less waiting", on0, on1, wait0, wait1)
	}
}
