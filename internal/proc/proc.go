// Package proc owns reading a process's state from Linux's /proc: whether
// it still runs (an exited process that its parent has not reaped yet, a
// zombie, still answers kill(pid, 0), but runs no more and has left its
// cgroups), its command name, its threads' CPU time and run-queue wait,
// and its memory; and the host's busy CPU time and its process tree.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// stat reads /proc/PID/stat: the command name and the fields after it
// (state first); ok false when pid is not shown or the line is cut short.
func stat(pid int) (comm string, fields []string, ok bool) {
	if pid <= 0 {
		return "", nil, false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", nil, false
	}
	open, closing := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open || closing+2 >= len(data) {
		return "", nil, false
	}
	return string(data[open+1 : closing]), strings.Fields(string(data[closing+2:])), true
}

// Stat returns pid's command name and whether it runs: it exists and is
// neither a zombie (Z) nor dead (X).
func Stat(pid int) (comm string, running bool) {
	comm, fields, ok := stat(pid)
	if !ok || len(fields) == 0 {
		return "", false
	}
	return comm, fields[0] != "Z" && fields[0] != "X"
}

// Exiting reports whether /proc shows pid on its way out: a zombie (Z),
// dead (X), or past the start of its exit (PF_EXITING in its flags), where
// the kernel moves it into no other cgroup and it runs no more of its own
// code. A pid /proc does not show is not reported exiting.
func Exiting(pid int) bool {
	_, fields, ok := stat(pid)
	if !ok || len(fields) < 7 {
		return false
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return true
	}
	flags, err := strconv.ParseUint(fields[6], 10, 64)
	return err == nil && flags&pfExiting != 0
}

// pfExiting is the kernel's PF_EXITING task flag (include/linux/sched.h).
const pfExiting = 0x4

// Running reports whether pid runs (see Stat).
func Running(pid int) bool {
	_, running := Stat(pid)
	return running
}

// Schedstat sums, over every thread of pid, the time spent on a CPU and the
// time spent runnable but waiting for one (/proc/PID/task/*/schedstat: the
// scheduler's own accounting, whatever else the machine is doing).
func Schedstat(pid int) (onCPU, waiting time.Duration) {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b))
		if len(fields) < 2 {
			continue
		}
		run, err1 := strconv.ParseInt(fields[0], 10, 64)
		wait, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 == nil && err2 == nil {
			onCPU, waiting = onCPU+time.Duration(run), waiting+time.Duration(wait)
		}
	}
	return onCPU, waiting
}

// RSS reads VmRSS and VmHWM of a process from /proc.
func RSS(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return rss, peak, nil
}

// CPUSeconds returns the user and system CPU seconds a process used, from
// /proc (clock ticks of 1/100 s).
func CPUSeconds(pid int) float64 {
	_, fields, ok := stat(pid)
	if !ok || len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
}

// ThreadSchedstat is the calling thread's time on a CPU and time runnable
// but waiting for one (/proc/thread-self/schedstat). A wait is counted
// when the thread runs again, so a thread that reads it twice sees every
// wait between the reads. The caller should hold its OS thread
// (runtime.LockOSThread) between the reads.
func ThreadSchedstat() (onCPU, waiting time.Duration, err error) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, 0, err
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0, 0, fmt.Errorf("/proc/thread-self/schedstat: %q", b)
	}
	run, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	wait, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	return time.Duration(run), time.Duration(wait), nil
}
