// Package proc owns reading a process's state from Linux's /proc: whether
// it still runs (an exited process that its parent has not reaped yet, a
// zombie, still answers kill(pid, 0), but runs no more and has left its
// cgroups) and its command name.
package proc

import (
	"bytes"
	"fmt"
	"os"
)

// Stat returns pid's command name and whether it runs: it exists and is
// neither a zombie (Z) nor dead (X).
func Stat(pid int) (comm string, running bool) {
	if pid <= 0 {
		return "", false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || closing < open || closing+2 >= len(stat) {
		return "", false
	}
	state := stat[closing+2]
	return string(stat[open+1 : closing]), state != 'Z' && state != 'X'
}

// Running reports whether pid runs (see Stat).
func Running(pid int) bool {
	_, running := Stat(pid)
	return running
}
