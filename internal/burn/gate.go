package burn

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Ready is the line a gated burner writes once its process has started,
// before it burns.
const Ready = "ready"

// Gated is a burner process's main: it writes Ready to out, waits for one
// byte on in, then burns share of a core until the process ends (Forever).
// Whoever started it (StartGated) moves it into the primary tenant's cgroup
// in between, so that the cgroup sees the burn alone and not the process's
// start-up: the runtime's threads and every package's init took about
// 100 ms of CPU on 6 threads for the acceptance test binary here, a load
// the primary tenant a test means to model does not have. It returns only
// on an error of out or in.
func Gated(share float64, in io.Reader, out io.Writer) error {
	if _, err := fmt.Fprintln(out, Ready); err != nil {
		return fmt.Errorf("saying ready: %w", err)
	}
	if _, err := io.ReadFull(in, make([]byte, 1)); err != nil {
		return fmt.Errorf("waiting for the go: %w", err)
	}
	Forever(share)
	return nil
}

// StartGated starts cmd, a process that runs Gated, waits up to timeout for
// it to be Ready, calls join with its pid (to move it into a cgroup), and
// then lets it burn. cmd's Stdin and Stdout must be unset: they become the
// gate (exec refuses the pipes otherwise). On an error after the start the
// process is left running, for the caller's cleanup to kill (cmd.Process is
// set then).
func StartGated(cmd *exec.Cmd, join func(pid int) error, timeout time.Duration) error {
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != Ready {
			err = fmt.Errorf("the burner said %q, not %q", line, Ready)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			return fmt.Errorf("burner %d: %w", cmd.Process.Pid, err)
		}
	case <-time.After(timeout):
		return fmt.Errorf("burner %d: not ready after %s", cmd.Process.Pid, timeout)
	}
	if err := join(cmd.Process.Pid); err != nil {
		return err
	}
	if _, err := in.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("burner %d: letting it burn: %w", cmd.Process.Pid, err)
	}
	return in.Close()
}
