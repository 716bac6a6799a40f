// Package standin is a latency-critical stand-in for a primary tenant and
// the open-loop load that measures it: an HTTP server whose every request
// burns a fixed CPU time, and a client that sends requests at a fixed rate
// whatever the earlier ones are doing, timing each from when it was due.
// Each answer says how long its handler took and how much of that its
// thread waited for a CPU, so a latency's tail can be split into the
// handler's own wait and the time outside the handler; Minutes gathers a
// run's answers by wall minute (the testbed's real primary).
// The acceptance measurements (acceptance/measure_primary_test.go) and
// scripts/cgroup-latency use it.
package standin

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/internal/burn"
	"github.com/harvest-platform/harvest/internal/proc"
)

// RequestCPU is the CPU work of one request.
const RequestCPU = 2 * time.Millisecond

// HandlerHeader and WaitHeader are the answer's account of the request:
// its handler's wall time, and how much of it the handler's thread spent
// runnable but waiting for a CPU (the scheduler's own accounting), in
// microseconds.
const (
	HandlerHeader = "Harvest-Handler-Us"
	WaitHeader    = "Harvest-Wait-Us"
)

// Served is what an answer says of its request (zero where it does not).
type Served struct {
	Handler time.Duration // the handler's wall time
	Wait    time.Duration // of it, waiting for a CPU
	Known   bool          // the answer carried both
}

func servedOf(h http.Header) Served {
	handler, err1 := strconv.ParseInt(h.Get(HandlerHeader), 10, 64)
	wait, err2 := strconv.ParseInt(h.Get(WaitHeader), 10, 64)
	if err1 != nil || err2 != nil {
		return Served{}
	}
	return Served{Handler: time.Duration(handler) * time.Microsecond, Wait: time.Duration(wait) * time.Microsecond, Known: true}
}

// Serve answers every request on addr after burning RequestCPU of the
// handling thread's CPU time (so a preempted request still does the same
// work); it returns when the server fails.
func Serve(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ServeOn(l)
}

// ServeOn is Serve on a listener already open (one a parent passed down).
func ServeOn(l net.Listener) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		start := time.Now()
		_, wait0, err0 := proc.ThreadSchedstat()
		burn.Spin(RequestCPU)
		_, wait1, err1 := proc.ThreadSchedstat()
		h := w.Header()
		h.Set(HandlerHeader, strconv.FormatInt(time.Since(start).Microseconds(), 10))
		if err0 == nil && err1 == nil {
			h.Set(WaitHeader, strconv.FormatInt((wait1-wait0).Microseconds(), 10))
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return srv.Serve(l)
}

// Latencies drives the stand-in on addr open loop: rate requests per
// second for d, each sent at its scheduled time whatever the earlier ones
// are doing, its latency counted from that time (so queueing behind a slow
// server is measured, not hidden). It returns the latencies (ms) and how
// many requests failed.
func Latencies(addr string, rate int, d time.Duration) ([]float64, int) {
	out := make([]float64, 0, int(d.Seconds()*float64(rate)))
	var mu sync.Mutex
	failed := 0
	Drive(context.Background(), addr, time.Now(), d, func(time.Time) float64 { return float64(rate) },
		func(_ time.Time, r Reply) {
			mu.Lock()
			defer mu.Unlock()
			if r.Err != nil {
				failed++
				return
			}
			out = append(out, float64(r.Latency.Microseconds())/1000)
		})
	return out, failed
}

// Reply is one request's outcome, as Drive's record gets it.
type Reply struct {
	// Latency counts from the request's due time to its answer read, so
	// queueing behind a slow server is measured, not hidden.
	Latency time.Duration
	// Late is the driver's own part of it: from the due time until the
	// request was handed to the HTTP client (the driver's timer and
	// goroutine waiting for their CPU), a delay of the measuring side.
	Late   time.Duration
	Served Served // what the answer said of the request
	Err    error
}

// Drive sends requests to the stand-in on addr open loop from start for d
// (or until ctx ends), at rateAt(t) requests a second, each sent when it is
// due whatever the earlier ones are doing; record gets each request's due
// time and its Reply. It returns when every request sent has been
// recorded. A rate at or below zero sends nothing until the rate rises
// (looked at every 100 ms).
func Drive(ctx context.Context, addr string, start time.Time, d time.Duration, rateAt func(time.Time) float64,
	record func(due time.Time, r Reply)) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512, DisableCompression: true}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	defer wg.Wait()
	end := start.Add(d)
	for due := start; due.Before(end); {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(due)):
		}
		rate := rateAt(due)
		if rate <= 0 {
			due = due.Add(100 * time.Millisecond)
			continue
		}
		wg.Add(1)
		go func(due time.Time) {
			defer wg.Done()
			late := time.Since(due)
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+addr+"/", nil)
			resp, err := client.Do(req)
			var served Served
			if err == nil {
				served = servedOf(resp.Header)
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			record(due, Reply{Latency: time.Since(due), Late: late, Served: served, Err: err})
		}(due)
		due = due.Add(time.Duration(float64(time.Second) / rate))
	}
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
