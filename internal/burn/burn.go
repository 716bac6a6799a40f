// Package burn owns the CPU burner that stands in for a primary tenant's
// load on the local cluster and in acceptance tests: a loop that burns a
// share of one core measured in the thread's own CPU time.
package burn

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// Period is the window in which a burner burns its share.
const Period = 10 * time.Millisecond

// Forever burns share (0 < share <= 1) of one core until the process ends:
// in every Period it spins until its thread has used share*Period of CPU
// time, then sleeps the rest. It counts CPU time, not wall time, so that a
// burner that is preempted catches up instead of burning less (on a loaded
// machine a wall-clock duty cycle gave a 1.2-core spike of under one core);
// it owes at most 100 ms.
func Forever(share float64) {
	runtime.LockOSThread()
	busy := time.Duration(share * float64(Period))
	next := time.Now()
	for {
		Spin(busy)
		next = next.Add(Period)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		} else if d < -100*time.Millisecond {
			next = time.Now()
		}
	}
}

// Spin uses d of the calling thread's CPU time; the caller should hold its
// OS thread (runtime.LockOSThread).
func Spin(d time.Duration) {
	for start := ThreadCPU(); ThreadCPU()-start < d; {
	}
}

// ThreadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func ThreadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
