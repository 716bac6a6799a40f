// Package standin is a latency-critical stand-in for a primary tenant and
// the open-loop load that measures it: an HTTP server whose every request
// burns a fixed CPU time, and a client that sends requests at a fixed rate
// whatever the earlier ones are doing, timing each from when it was due.
// The acceptance measurements (acceptance/measure_primary_test.go) and
// scripts/cgroup-latency use it.
package standin

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/internal/burn"
)

// RequestCPU is the CPU work of one request.
const RequestCPU = 2 * time.Millisecond

// Serve answers every request on addr after burning RequestCPU of the
// handling thread's CPU time (so a preempted request still does the same
// work); it returns when the server fails.
func Serve(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		burn.Spin(RequestCPU)
		_, _ = w.Write([]byte("ok\n"))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return srv.ListenAndServe()
}

// Latencies drives the stand-in on addr open loop: rate requests per
// second for d, each sent at its scheduled time whatever the earlier ones
// are doing, its latency counted from that time (so queueing behind a slow
// server is measured, not hidden). It returns the latencies (ms) and how
// many requests failed.
func Latencies(addr string, rate int, d time.Duration) ([]float64, int) {
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

// Quantiles are p50, p99 and p999 of xs.
func Quantiles(xs []float64) [3]float64 {
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

// Median of xs (0 for none).
func Median(xs []float64) float64 {
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
