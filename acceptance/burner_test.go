//go:build acceptance

package acceptance

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/burn"
)

// burnEnv makes the test binary, started again, a CPU-burning "primary
// tenant": once in the node's primary cgroup (burn.Gated: its own start-up
// is not part of the spike), it burns the given share of a core's time in
// every 10 ms (CPU time) until killed.
const burnEnv = "HARVEST_ACCEPTANCE_BURN"

func init() {
	if v := os.Getenv(burnEnv); v != "" {
		share, err := strconv.ParseFloat(v, 64)
		if err != nil || share <= 0 || share > 1 {
			os.Exit(2)
		}
		if err := burn.Gated(share, os.Stdin, os.Stdout); err != nil {
			os.Exit(2)
		}
	}
}

// startBurner starts a real process burning share of a core in node's
// primary-tenant cgroup, at nice -10; it is killed at cleanup.
func startBurner(t *testing.T, node string, share float64) (stop func()) {
	t.Helper()
	return startBurnerAt(t, node, share, "-10")
}

// startBurnerAt is startBurner at the given nice.
func startBurnerAt(t *testing.T, node string, share float64, nice string) (stop func()) {
	t.Helper()
	// At nice -10: the primary tenant owns its server, while this machine is
	// shared with other work at nice 0 that would otherwise keep a burner
	// from reaching its share, and a spike from being one.
	cmd := exec.Command("nice", "-n", nice, os.Args[0])
	cmd.Env = append(os.Environ(), burnEnv+"="+strconv.FormatFloat(share, 'f', 2, 64))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stopped := false
	stop = func() {
		if !stopped && cmd.Process != nil {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	if err := burn.StartGated(cmd, func(pid int) error { return cluster.JoinPrimary(node, pid) }, time.Minute); err != nil {
		stop()
		t.Fatal(err)
	}
	return stop
}
