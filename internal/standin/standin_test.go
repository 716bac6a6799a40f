package standin

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestQuantilesAndMedian(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(1000 - i)
	}
	if q := Quantiles(xs); q != [3]float64{501, 991, 1000} {
		t.Errorf("quantiles %v", q)
	}
	if Quantiles(nil) != [3]float64{} || Median(nil) != 0 || Median([]float64{3, 1, 2}) != 2 || Median([]float64{4, 1, 2, 3}) != 2.5 {
		t.Error("median or empty quantiles")
	}
}

// The stand-in answers, every request takes at least its CPU work, and a
// dead address counts as failures, not as latencies.
func TestServeAndLatencies(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	go func() { _ = Serve(addr) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stand-in does not listen")
		}
	}
	lat, failed := Latencies(addr, 50, 400*time.Millisecond)
	if failed != 0 || len(lat) != 20 {
		t.Fatalf("%d latencies, %d failed", len(lat), failed)
	}
	if q := Quantiles(lat); q[0] < float64(RequestCPU.Microseconds())/1000 {
		t.Errorf("p50 %.3f ms below the request's CPU work", q[0])
	}
	if lat, failed := Latencies("127.0.0.1:1", 50, 100*time.Millisecond); failed != 5 || len(lat) != 0 {
		t.Errorf("a dead address: %d latencies, %d failed", len(lat), failed)
	}
}

// Every answer says its handler's wall time, at least the request's CPU
// work and no more than its latency, and a wait within it.
func TestAnswersSayTheirHandlersTimeAndWait(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ServeOn(l) }()
	var mu sync.Mutex
	var got []Served
	var lats []time.Duration
	Drive(context.Background(), l.Addr().String(), time.Now(), 300*time.Millisecond, func(time.Time) float64 { return 20 },
		func(_ time.Time, lat time.Duration, s Served, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			got, lats = append(got, s), append(lats, lat)
		})
	if len(got) == 0 {
		t.Fatal("no request answered")
	}
	for i, s := range got {
		if !s.Known || s.Handler < RequestCPU || s.Handler > lats[i] || s.Wait < 0 || s.Wait > s.Handler {
			t.Errorf("request %d: %+v with latency %v: want a handler of at least %v within the latency, a wait within it", i, s, lats[i], RequestCPU)
		}
	}
	if s := servedOf(http.Header{}); s.Known {
		t.Errorf("an answer without the headers: %+v", s)
	}
}
