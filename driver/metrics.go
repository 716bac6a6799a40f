package driver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/observability/metricset"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// driverMetrics are the guard's series (the plugin manager adds its
// harvest_plugin_* series to the same registry).
type driverMetrics struct {
	evictions    *prometheus.CounterVec // reason: cpu, memory, stale
	suppressions *prometheus.CounterVec // reason: cpu, stale
	refused      *prometheus.CounterVec // reason: reserve, stale, user, cgroup
	reserveCPU   prometheus.Gauge
	reserveMem   prometheus.Gauge
	primaryCPU   prometheus.Gauge
	primaryMem   prometheus.Gauge
	harvestCPU   prometheus.Gauge
	harvestMem   prometheus.Gauge
	capCores     prometheus.Gauge
	reserveLent  prometheus.Gauge
	age          prometheus.Gauge
	failSafe     prometheus.Gauge
	earlyTicks   prometheus.Counter
	// readingsDiscarded: window: tick, peek
	readingsDiscarded *prometheus.CounterVec
}

func newDriverMetrics(reg prometheus.Registerer, cgroup func() *harvestcg.Parent) *driverMetrics {
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "harvest_driver_" + name, Help: help})
	}
	m := &driverMetrics{
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "harvest_driver_evictions_total",
			Help: "Harvested tasks evicted, by reason (cpu: capped below their need for longer than the grace; memory; stale: the primary tenant unmeasured)."}, []string{"reason"}),
		suppressions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "harvest_driver_suppressions_total",
			Help: "Harvested tasks told they are capped below what they need (cpu), and fail-safe entries (stale), by reason."}, []string{"reason"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "harvest_driver_admissions_refused_total",
			Help: "Task starts refused, by reason (reserve, stale, user, task_dir, cgroup)."}, []string{"reason"}),
		reserveCPU:  g("reserve_cpu_cores", "The effective CPU reserve kept for the primary tenant."),
		reserveMem:  g("reserve_memory_bytes", "The effective memory reserve kept for the primary tenant."),
		primaryCPU:  g("primary_cpu_cores", "The primary tenant's CPU at the last good measurement (not rounded)."),
		primaryMem:  g("primary_memory_bytes", "The primary tenant's memory at the last good measurement."),
		harvestCPU:  g("harvested_cpu_cores", "What the running harvested tasks use (their executors' stats)."),
		harvestMem:  g("harvested_memory_bytes", "What the running harvested tasks use (RSS, their executors' stats)."),
		capCores:    g("cpu_cap_cores", "The CPU cap of the harvested tasks: capacity - rounded primary - reserve (0 when failing safe; the capacity while the reserve is lent)."),
		reserveLent: g("cpu_reserve_lent", "1 while the CPU reserve is lent to the harvested tasks: the primary tenant rounds up to no core (lend_idle_reserve)."),
		age:         g("usage_age_seconds", "How long ago the primary tenant was last measured well."),
		failSafe:    g("fail_safe", "1 while the primary tenant is unmeasured for longer than stale_after: nothing admitted, everything evicted."),
		earlyTicks: prometheus.NewCounter(prometheus.CounterOpts{Name: "harvest_driver_spike_ticks_total",
			Help: "Guard ticks the spike check brought forward: two peeks in a row saw the primary tenant above the cores the cap was set from."}),
		readingsDiscarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "harvest_driver_readings_discarded_total",
			Help: "Measurement windows of the primary tenant not used because their timing was uncertain by more than a tenth of their length (the next window covers them), by window (tick, peek)."}, []string{"window"}),
	}
	stat := func(f func(harvestcg.Stats) float64) func() float64 {
		return func() float64 {
			if p := cgroup(); p != nil {
				if s, err := p.Stats(); err == nil {
					return f(s)
				}
			}
			return 0
		}
	}
	reg.MustRegister(m.evictions, m.suppressions, m.refused, m.reserveCPU, m.reserveMem, m.primaryCPU, m.primaryMem,
		m.harvestCPU, m.harvestMem, m.capCores, m.reserveLent, m.age, m.failSafe, m.earlyTicks, m.readingsDiscarded,
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "harvest_driver_harvested_cpu_seconds_total",
			Help: "CPU the harvested tasks used, from their parent cgroup."}, stat(func(s harvestcg.Stats) float64 { return s.CPUSeconds })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "harvest_driver_throttled_periods_total",
			Help: "CFS periods in which the cap stopped the harvested tasks."}, stat(func(s harvestcg.Stats) float64 { return float64(s.ThrottledPeriods) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "harvest_driver_throttled_seconds_total",
			Help: "How long the cap stopped the harvested tasks, summed over CPUs."}, stat(func(s harvestcg.Stats) float64 { return s.ThrottledSeconds })))
	// every reason shows from the start, at 0
	for _, r := range []guard.Reason{guard.ReasonCPU, guard.ReasonMemory, guard.ReasonStale} {
		m.evictions.WithLabelValues(string(r))
	}
	for _, r := range []guard.Reason{guard.ReasonCPU, guard.ReasonStale} {
		m.suppressions.WithLabelValues(string(r))
	}
	for _, w := range []string{windowTick, windowPeek} {
		m.readingsDiscarded.WithLabelValues(w)
	}
	for _, r := range []string{refusedReserve, refusedStale, refusedUser, refusedTaskDir, refusedCgroup} {
		m.refused.WithLabelValues(r)
	}
	return m
}

// MetricNames are the series the driver serves at metrics_address: the
// guard's harvest_driver_* and the plugin manager's harvest_plugin_*, named
// from the collectors newDriverMetrics and the manager build (observability's
// test checks the dashboard and the alerts against them).
func MetricNames() []string {
	rec := metricset.NewRecorder()
	newDriverMetrics(rec, func() *harvestcg.Parent { return nil })
	manager.RegisterMetrics(rec)
	return rec.Names()
}

// The measurement windows whose readings may be discarded for their timing.
const (
	windowTick = "tick" // the guard tick's measurement of the primary
	windowPeek = "peek" // the spike check's
)

// Why a start was refused (harvest_driver_admissions_refused_total).
const (
	refusedReserve = "reserve"  // it would break the reserve
	refusedStale   = "stale"    // failing safe
	refusedUser    = "user"     // root, or a denied user
	refusedTaskDir = "task_dir" // the task user cannot reach its task directory
	refusedCgroup  = "cgroup"   // it could not be put in the harvest cgroup
)

// tick records one guard tick.
func (m *driverMetrics) tick(plan guard.Plan, reserve, primary, harvested guard.Resources) {
	m.reserveCPU.Set(reserve.CPU)
	m.reserveMem.Set(reserve.MemoryMiB * mib)
	m.primaryCPU.Set(primary.CPU)
	m.primaryMem.Set(primary.MemoryMiB * mib)
	m.harvestCPU.Set(harvested.CPU)
	m.harvestMem.Set(harvested.MemoryMiB * mib)
	m.capCores.Set(plan.Cap)
	m.reserveLent.Set(oneIf(plan.Lent))
	m.age.Set(plan.Age.Seconds())
	m.failSafe.Set(oneIf(plan.Stale))
}

const mib = 1 << 20

// serveMetrics serves the driver's registry (the guard's harvest_driver_*
// series and the usage plugin's harvest_plugin_*) at GET /metrics on addr
// until the driver shuts down. A Nomad task driver has no metrics endpoint
// of its own, so this is the way to see them.
func (d *Driver) serveMetrics(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.metrics, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-d.ctx.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.logger.Error("metrics endpoint stopped", "error", err)
		}
	}()
	d.logger.Info("serving metrics", "address", l.Addr().String())
	return nil
}

// oneIf is a flag as a gauge's value.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
