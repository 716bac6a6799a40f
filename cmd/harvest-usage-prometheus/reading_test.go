package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// stampingExporter serves a primary cgroup whose CPU counter grows at rate
// cores, stamped like cAdvisor's with when it was read, and then holds the
// reply for delay (a loaded exporter or network). While frozen it repeats
// the last stamp and value, as cAdvisor does between its housekeeping reads.
type stampingExporter struct {
	mu     sync.Mutex
	t0     time.Time
	rate   float64
	delay  func() time.Duration
	frozen bool
	last   time.Time
}

func (e *stampingExporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	if !e.frozen || e.last.IsZero() {
		e.last = time.UnixMilli(time.Now().UnixMilli())
	}
	at, cpu := e.last, 100+e.rate*e.last.Sub(e.t0).Seconds()
	delay := e.delay()
	e.mu.Unlock()
	body := "# TYPE node_cpu_seconds_total counter\nnode_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 10\n" +
		"node_memory_MemTotal_bytes 1e9\nnode_memory_MemAvailable_bytes 5e8\n" +
		"# TYPE container_cpu_usage_seconds_total counter\n" +
		fmt.Sprintf("container_cpu_usage_seconds_total{id=\"/primary\"} %.6f %d\n", cpu, at.UnixMilli()) +
		"container_memory_working_set_bytes{id=\"/primary\"} 1e8\n"
	time.Sleep(delay)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprint(w, body)
}

func stampingSource(t *testing.T, e *stampingExporter) *source {
	t.Helper()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	s := newSource(hclog.NewNullLogger())
	if err := s.SetConfig(map[string]string{"url": srv.URL, "first_interval": "50ms",
		"primary_cpu_metric": "container_cpu_usage_seconds_total", "primary_memory_metric": "container_memory_working_set_bytes",
		"primary_labels": "id=/primary"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Replies delayed by 0 or 150 ms in turn: stamped by when each reply
// arrived, the rate of a 0.5-core primary would swing from ~0.1 to ~2.
// Rated over the exporter's own stamps it is 0.5 every time.
func TestPrimaryRateFollowsTheExportersTimestamps(t *testing.T) {
	var n int
	e := &stampingExporter{t0: time.Now(), rate: 0.5, delay: func() time.Duration {
		n++
		return time.Duration(n%2) * 150 * time.Millisecond
	}}
	s := stampingSource(t, e)
	for i := range 6 {
		u, err := s.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(u.PrimaryCPUCores-0.5) > 0.02 {
			t.Fatalf("sample %d: primary %.3f cores, want 0.5 whatever the reply's delay", i, u.PrimaryCPUCores)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An exporter whose stamps stand still has nothing new: the first Sample
// says so; later ones repeat the last rate with its own time, so a caller's
// staleness check sees the exporter stop.
func TestFrozenStampsRepeatTheLastRate(t *testing.T) {
	e := &stampingExporter{t0: time.Now(), rate: 1.5, delay: func() time.Duration { return 0 }, frozen: true}
	s := stampingSource(t, e)
	if _, err := s.Sample(context.Background()); err == nil {
		t.Fatal("first Sample over frozen stamps: no error")
	}
	e.mu.Lock()
	e.frozen = false
	e.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	u, err := s.Sample(context.Background())
	if err != nil || math.Abs(u.PrimaryCPUCores-1.5) > 0.05 {
		t.Fatalf("after the stamps moved: %+v, %v; want 1.5 cores", u, err)
	}
	e.mu.Lock()
	e.frozen = true
	e.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	again, err := s.Sample(context.Background())
	if err != nil || again != u {
		t.Fatalf("frozen again: %+v, %v; want the last sample %+v unchanged", again, err, u)
	}
}

func TestNotNewer(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	t1 := t0.Add(time.Millisecond)
	prev := &reading{at: t0, primaryAt: t0, hostBusySeconds: 1, primaryCPUSeconds: 1}
	for _, c := range []struct {
		name    string
		cur     reading
		primary bool
		want    bool
	}{
		{"both moved", reading{at: t1, primaryAt: t1, primaryCPUSeconds: 2}, true, false},
		{"primary stamp still, value moved within the millisecond", reading{at: t1, primaryAt: t0, primaryCPUSeconds: 1.001}, true, true},
		{"host stamp still", reading{at: t0, primaryAt: t1}, true, true},
		{"primary stamp still but not read", reading{at: t1, primaryAt: t0}, false, false},
		{"primary NaN under the old stamp", reading{at: t1, primaryAt: t0, primaryCPUSeconds: math.NaN()}, true, false},
	} {
		if got := notNewer(prev, &c.cur, c.primary); got != c.want {
			t.Errorf("%s: notNewer %v, want %v", c.name, got, c.want)
		}
	}
}

// unstampedExporter serves a host whose busy CPU grows at rate cores, without
// timestamps (as node_exporter), read when the request arrives and then held
// for delay before the reply.
type unstampedExporter struct {
	mu    sync.Mutex
	t0    time.Time
	rate  float64
	delay time.Duration
}

func (e *unstampedExporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	busy, delay := e.rate*time.Since(e.t0).Seconds(), e.delay
	e.mu.Unlock()
	time.Sleep(delay)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE node_cpu_seconds_total counter\nnode_cpu_seconds_total{cpu=\"0\",mode=\"user\"} %.6f\n"+
		"node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1\nnode_memory_MemTotal_bytes 1e9\nnode_memory_MemAvailable_bytes 5e8\n", busy)
}

// A scrape whose reply is held for longer than a tenth of the window leaves
// the window's length unknown (the counter was read somewhere in the
// scrape): the window is merged into the next, the last rate standing
// meanwhile, instead of rating the counter over a span that includes the
// delay.
func TestASlowUnstampedScrapeIsMergedIntoTheNextWindow(t *testing.T) {
	e := &unstampedExporter{t0: time.Now(), rate: 1}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	s := newSource(hclog.NewNullLogger())
	if err := s.SetConfig(map[string]string{"url": srv.URL, "first_interval": "200ms"}); err != nil {
		t.Fatal(err)
	}
	first, err := s.Sample(context.Background())
	if err != nil || math.Abs(first.HostCPUCores-1) > 0.15 {
		t.Fatalf("first sample %+v %v, want 1 core", first, err)
	}
	e.mu.Lock()
	e.delay = 150 * time.Millisecond
	e.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	slow, err := s.Sample(context.Background())
	if err != nil || slow != first {
		t.Fatalf("a slow scrape rated a window: %+v %v, want the last sample %+v again", slow, err, first)
	}
	e.mu.Lock()
	e.delay = 0
	e.mu.Unlock()
	time.Sleep(time.Second)
	next, err := s.Sample(context.Background())
	if err != nil || next == first || math.Abs(next.HostCPUCores-1) > 0.15 {
		t.Fatalf("the window after: %+v %v, want 1 core rated anew over both", next, err)
	}
}
