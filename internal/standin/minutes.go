package standin

import (
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Minute is one wall minute of an open-loop run against the stand-in.
type Minute struct {
	Minute     int     `json:"minute"`      // wall minutes from the run's start
	TraceHours float64 `json:"trace_hours"` // the minute's start, trace hours from the run's start (a replay's speed-up)
	Requests   int     `json:"requests"`
	Failed     int     `json:"failed"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	// P99HandlerWaitMs and P99OutsideHandlerMs split the latency's tail:
	// the p99 of the minute's requests' wait for a CPU inside their handler
	// (Served.Wait), and of their time outside it (latency minus
	// Served.Handler: the send, the accept, the goroutine's start, the
	// answer), over the Accounted requests whose answer said.
	P99HandlerWaitMs    float64 `json:"p99_handler_wait_ms"`
	P99OutsideHandlerMs float64 `json:"p99_outside_handler_ms"`
	Accounted           int     `json:"accounted"`
	// P99DriverLateMs is the p99 of the answered requests' Reply.Late: how
	// much of the time outside the handler was the measuring side's own
	// wait before sending (absent in runs before it).
	P99DriverLateMs float64 `json:"p99_driver_late_ms,omitempty"`
	// OnCPUSeconds and WaitSeconds are the stand-in's over the minute,
	// from its schedstat at the minute's start and the next one's.
	OnCPUSeconds float64 `json:"on_cpu_seconds"`
	WaitSeconds  float64 `json:"wait_seconds"`
}

// Minutes gathers a run's answers (Drive's record) by wall minute from its
// start, and the stand-in's schedstat at each minute's start (Sched).
type Minutes struct {
	mu        sync.Mutex
	began     time.Time
	latencies map[int][]float64
	waits     map[int][]float64 // inside the handler, ms
	outside   map[int][]float64 // latency minus the handler's wall time, ms
	late      map[int][]float64 // Reply.Late, ms
	failed    map[int]int
	on, wait  map[int]time.Duration // cumulative at the minute's start
}

// NewMinutes is an empty log of a run started at began.
func NewMinutes(began time.Time) *Minutes {
	return &Minutes{began: began, latencies: map[int][]float64{}, waits: map[int][]float64{}, outside: map[int][]float64{}, late: map[int][]float64{},
		failed: map[int]int{}, on: map[int]time.Duration{}, wait: map[int]time.Duration{}}
}

// Record takes one request, in the minute it was due.
func (m *Minutes) Record(due time.Time, r Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := int(due.Sub(m.began) / time.Minute)
	if r.Err != nil {
		m.failed[k]++
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	m.latencies[k] = append(m.latencies[k], ms(r.Latency))
	m.late[k] = append(m.late[k], ms(r.Late))
	if r.Served.Known {
		m.waits[k] = append(m.waits[k], ms(r.Served.Wait))
		m.outside[k] = append(m.outside[k], ms(max(0, r.Latency-r.Served.Handler)))
	}
}

// Sched takes the stand-in's cumulative schedstat at minute k's start.
func (m *Minutes) Sched(k int, on, wait time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.on[k], m.wait[k] = on, wait
}

// Report is the minutes 0..minutes-1 (speedup: trace seconds a wall
// second); a minute's CPU figures need the schedstat at its start and at
// the next one's.
func (m *Minutes) Report(minutes int, speedup float64) []Minute {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Minute, 0, minutes)
	for k := range minutes {
		lat := m.latencies[k]
		pm := Minute{Minute: k, TraceHours: float64(k) * 60 * speedup / 3600, Requests: len(lat) + m.failed[k],
			Failed: m.failed[k], P50ms: quantile(lat, 0.5), P99ms: quantile(lat, 0.99),
			P99HandlerWaitMs: quantile(m.waits[k], 0.99), P99OutsideHandlerMs: quantile(m.outside[k], 0.99), Accounted: len(m.waits[k]),
			P99DriverLateMs: quantile(m.late[k], 0.99)}
		on0, ok0 := m.on[k]
		on1, ok1 := m.on[k+1]
		if ok0 && ok1 {
			pm.OnCPUSeconds = (on1 - on0).Seconds()
			pm.WaitSeconds = (m.wait[k+1] - m.wait[k]).Seconds()
		}
		out = append(out, pm)
	}
	return out
}

// quantile is the empirical p-quantile of xs (0 for none), as the
// testbed's summaries compute theirs.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return stat.Quantile(p, stat.Empirical, s, nil)
}
