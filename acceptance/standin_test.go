//go:build acceptance

package acceptance

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/burn"
)

// serveEnv makes the test binary, started again, a latency-critical
// stand-in for a primary tenant: an HTTP server on the given address whose
// every request burns requestCPU of CPU time (thread CPU time, so a
// preempted request still does the same work) before it answers.
const serveEnv = "HARVEST_ACCEPTANCE_SERVE"

// requestCPU is the CPU work of one request to the stand-in.
const requestCPU = 2 * time.Millisecond

func init() {
	addr := os.Getenv(serveEnv)
	if addr == "" {
		return
	}
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		burn.Spin(requestCPU)
		_, _ = w.Write([]byte("ok\n"))
	})
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		os.Exit(3)
	}
	os.Exit(0)
}

// startStandIn starts the stand-in in node's primary-tenant cgroup and
// returns its address once it answers; it is killed at cleanup.
func startStandIn(t *testing.T, node string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
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
			return addr
		}
	}
	t.Fatalf("the stand-in on %s does not answer", addr)
	return ""
}

// latencies drives the stand-in open loop: rate requests per second for
// d, each sent at its scheduled time whatever the earlier ones are doing,
// its latency counted from that time (so queueing behind a slow server is
// measured, not hidden). It returns the latencies (ms) and the failures.
func latencies(addr string, rate int, d time.Duration) ([]float64, int) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512, DisableCompression: true}}
	defer client.CloseIdleConnections()
	n := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	out := make([]float64, 0, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := 0
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
			resp, err := client.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			lat := time.Since(at)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				return
			}
			out = append(out, float64(lat.Microseconds())/1000)
		}()
	}
	wg.Wait()
	return out, failed
}

// quantiles are p50, p99 and p999 of xs.
func quantiles(xs []float64) [3]float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		if len(s) == 0 {
			return 0
		}
		return s[min(len(s)-1, int(p*float64(len(s))))]
	}
	return [3]float64{q(0.5), q(0.99), q(0.999)}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtQ(q [3]float64) string { return fmt.Sprintf("%6.2f %6.2f %7.2f", q[0], q[1], q[2]) }
