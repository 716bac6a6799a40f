package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harvest-platform/harvest/internal/hostsweep"
)

// startAgent starts binary with args, its output appended to a.Log, in a
// session of its own (so a terminal's Ctrl-C reaches only the harness, which
// then tears down in order). Unless detached, the kernel kills it when this
// process dies. The pid goes into a.PID and a pid file beside the log.
func startAgent(a *Agent, env []string, detached bool, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(a.Log), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(a.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(a.Binary, args...)
	cmd.Dir = a.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if !detached {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", a.Name, err)
	}
	a.PID = cmd.Process.Pid
	go cmd.Wait() // reap it when it exits, so it does not linger as a zombie
	return os.WriteFile(strings.TrimSuffix(a.Log, ".log")+".pid", []byte(strconv.Itoa(a.PID)+"\n"), 0o644)
}

// agentEnv is this process's environment without what breaks the agents:
// AWS_CA_BUNDLE makes Nomad's cloud fingerprinters abort.
func agentEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_CA_BUNDLE=") || strings.HasPrefix(kv, "NOMAD_") || strings.HasPrefix(kv, "CONSUL_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// stopPID sends SIGTERM, waits up to grace for the process to end, then
// sends SIGKILL and waits again. It reports whether the process is gone.
func stopPID(pid int, binary string, grace time.Duration) bool {
	if !hostsweep.Alive(pid, binary) {
		return true
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false
	}
	if waitGone(pid, binary, grace) {
		return true
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return waitGone(pid, binary, 5*time.Second)
}

func waitGone(pid int, binary string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !hostsweep.Alive(pid, binary) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return !hostsweep.Alive(pid, binary)
}

// StartProcess starts a process beside the cluster as the harness starts
// its agents (output to a.Log, a session of its own, killed by the kernel
// if this process dies, its pid in a.PID), e.g. a placer a caller runs.
func StartProcess(a *Agent, args ...string) error {
	return startAgent(a, agentEnv(a.Env...), false, args...)
}

// StopProcess stops what StartProcess started: SIGTERM, then SIGKILL after
// grace. It reports whether the process is gone.
func StopProcess(a Agent, grace time.Duration) bool { return stopPID(a.PID, a.Binary, grace) }
