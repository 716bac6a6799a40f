//go:build acceptance

package acceptance

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startDaemonStoppable runs one of Harvest's daemons as a real process,
// its output appended to a log in the cluster's log folder, and returns
// the log's path and a stop function (SIGTERM, which must end it cleanly
// within 15 s) that the test may call to restart it; the cleanup calls it
// otherwise.
func startDaemonStoppable(t *testing.T, binary string, args ...string) (string, func()) {
	t.Helper()
	path := filepath.Join(bin, binary)
	if filepath.IsAbs(binary) { // a binary from elsewhere (the race-detector build of harvest-blob)
		path, binary = binary, filepath.Base(binary)
	}
	logPath := filepath.Join(cluster.RunDir, "logs", binary+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s did not shut down cleanly on SIGTERM: %v (log %s)", binary, err, logPath)
				}
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("%s ignored SIGTERM for 15s (log %s)", binary, logPath)
			}
			logf.Close()
		})
	}
	t.Cleanup(stop)
	return logPath, stop
}
