//go:build acceptance

package acceptance

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/standin"
)

// serveEnv makes the test binary, started again, a latency-critical
// stand-in for a primary tenant (internal/standin) on the given address.
const serveEnv = "HARVEST_ACCEPTANCE_SERVE"

func init() {
	addr := os.Getenv(serveEnv)
	if addr == "" {
		return
	}
	if err := standin.Serve(addr); err != nil {
		os.Exit(3)
	}
	os.Exit(0)
}

// startStandIn starts the stand-in in node's primary-tenant cgroup and
// returns its address once it answers; it is killed at cleanup.
func startStandIn(t *testing.T, node string) (addr string, pid int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	cmd := exec.Command(os.Args[0])
	if n := os.Getenv("HARVEST_MEASURE_NICE"); n != "" { // every thread of the stand-in at this nice
		cmd = exec.Command("nice", "-n", n, os.Args[0])
	}
	cmd.Env = append(os.Environ(), serveEnv+"="+addr, "GOMAXPROCS="+strconv.Itoa(runtime.NumCPU()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := cluster.JoinPrimary(node, cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/"); err == nil {
			resp.Body.Close()
			return addr, cmd.Process.Pid
		}
	}
	t.Fatalf("the stand-in on %s does not answer", addr)
	return "", 0
}

func fmtQ(q [3]float64) string { return fmt.Sprintf("%6.2f %6.2f %7.2f", q[0], q[1], q[2]) }
