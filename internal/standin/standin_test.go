package standin

import (
	"context"
	"net"
	"net/http"
	"os"
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
		func(_ time.Time, r Reply) {
			mu.Lock()
			defer mu.Unlock()
			if r.Err != nil {
				t.Error(r.Err)
				return
			}
			if r.Late <= 0 || r.Late > r.Latency {
				t.Errorf("the driver's lateness %v: want a time after the due one, within the latency %v", r.Late, r.Latency)
			}
			got, lats = append(got, r.Served), append(lats, r.Latency)
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

// Each wall minute has its own p99 and its own share of the stand-in's
// CPU and waits; failures are counted apart from the latencies; a minute
// without the next minute's schedstat has no CPU figures.
func TestRunsAreReportedPerMinute(t *testing.T) {
	began := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMinutes(began)
	for i := range 100 {
		// minute 0: 1..100 ms, of it a handler of 2 ms that waited (i+1)/10 ms
		served := Served{Handler: 2 * time.Millisecond, Wait: time.Duration(i+1) * 100 * time.Microsecond, Known: true}
		// and a driver late by i/100 ms before sending
		m.Record(began.Add(time.Duration(i)*100*time.Millisecond),
			Reply{Latency: time.Duration(i+1) * time.Millisecond, Late: time.Duration(i) * 10 * time.Microsecond, Served: served})
		// minute 1: 3 ms, from an answer that did not say
		m.Record(began.Add(time.Minute+time.Duration(i)*100*time.Millisecond), Reply{Latency: 3 * time.Millisecond})
	}
	m.Record(began.Add(90*time.Second), Reply{Err: os.ErrDeadlineExceeded})
	m.Sched(0, 10*time.Second, 1*time.Second)
	m.Sched(1, 40*time.Second, 4*time.Second)
	got := m.Report(2, 12)
	if len(got) != 2 || got[0].Requests != 100 || got[1].Requests != 101 || got[1].Failed != 1 {
		t.Fatalf("minutes %+v", got)
	}
	if got[0].P99ms < 98 || got[0].P99ms > 100 || got[1].P99ms != 3 || got[1].TraceHours != 0.2 {
		t.Fatalf("p99 %v and %v, minute 1 at %v trace hours: want about 99, 3 and 0.2", got[0].P99ms, got[1].P99ms, got[1].TraceHours)
	}
	if got[0].OnCPUSeconds != 30 || got[0].WaitSeconds != 3 || got[1].OnCPUSeconds != 0 {
		t.Fatalf("schedstat %+v", got)
	}
	// the tail split: the handler's wait (0.1..10 ms) and the time outside
	// it (latency - 2 ms, at least 0: 0..98 ms); nothing where no answer said
	if w, o := got[0].P99HandlerWaitMs, got[0].P99OutsideHandlerMs; w < 9.8 || w > 10 || o < 96 || o > 98 {
		t.Fatalf("minute 0's p99 handler wait %v, outside %v: want about 9.9 and 97", w, o)
	}
	if l := got[0].P99DriverLateMs; l < 0.97 || l > 0.99 {
		t.Fatalf("minute 0's p99 driver lateness %v: want about 0.98", l)
	}
	if got[0].Accounted != 100 || got[1].Accounted != 0 || got[1].P99HandlerWaitMs != 0 || got[1].P99OutsideHandlerMs != 0 {
		t.Fatalf("minute 1 had no answer's account, yet %+v", got[1])
	}
}
