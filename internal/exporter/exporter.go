// Package exporter is the local cluster's stand-in for what a production
// host runs beside its primary tenant: node_exporter's node_cpu_seconds_total
// and node_memory_* for the host (read with prometheus/procfs), and
// cAdvisor's container_cpu_usage_seconds_total and
// container_memory_usage_bytes with an id label for each primary tenant's
// cgroup, read as the harvest driver's cgroup source reads them. The
// driver's external usage source (harvest-usage-prometheus) reads it over
// HTTP, as it would read the real exporters; harvest-dev dev-cluster
// exporter serves it.
//
// In replay mode (Replay, replay.go) the primary tenants' series come from a
// CPU trace instead of their cgroups, so that a node stands in for a server
// of any size whose primary tenant follows the trace, without burning CPU.
package exporter

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/procfs"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/usage"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

const cgroupRoot = "/sys/fs/cgroup"

// exporterCollector reads the host and the cgroups at every scrape.
type exporterCollector struct {
	proc    procfs.FS
	cgroups []string   // primary cgroup paths, e.g. /harvest-15000-client-1-primary
	mu      sync.Mutex // scrapes may overlap
	sources map[string]*usage.Cgroup
	replay  *Replay // nil: the cgroups are read
	cpu     *prometheus.Desc
	memTot  *prometheus.Desc
	memAv   *prometheus.Desc
	cgCPU   *prometheus.Desc
	cgMem   *prometheus.Desc
}

var _ prometheus.Collector = (*exporterCollector)(nil)

func newExporterCollector(cgroups []string, rep *Replay) (*exporterCollector, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, err
	}
	if rep != nil {
		if cgroups, err = rep.check(cgroups); err != nil {
			return nil, err
		}
	}
	return &exporterCollector{
		proc: fs, cgroups: cgroups, sources: map[string]*usage.Cgroup{}, replay: rep,
		cpu:    prometheus.NewDesc("node_cpu_seconds_total", "Seconds the CPUs spent in each mode.", []string{"cpu", "mode"}, nil),
		memTot: prometheus.NewDesc("node_memory_MemTotal_bytes", "Memory information field MemTotal_bytes.", nil, nil),
		memAv:  prometheus.NewDesc("node_memory_MemAvailable_bytes", "Memory information field MemAvailable_bytes.", nil, nil),
		cgCPU:  prometheus.NewDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", []string{"id"}, nil),
		cgMem:  prometheus.NewDesc("container_memory_usage_bytes", "Current memory usage in bytes.", []string{"id"}, nil),
	}, nil
}

func (c *exporterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.cpu, c.memTot, c.memAv, c.cgCPU, c.cgMem} {
		ch <- d
	}
}

func (c *exporterCollector) Collect(ch chan<- prometheus.Metric) {
	if st, err := c.proc.Stat(); err == nil {
		for i, cpu := range st.CPU {
			cpuLabel := strconv.FormatInt(i, 10)
			for mode, v := range map[string]float64{"user": cpu.User, "nice": cpu.Nice, "system": cpu.System, "idle": cpu.Idle,
				"iowait": cpu.Iowait, "irq": cpu.IRQ, "softirq": cpu.SoftIRQ, "steal": cpu.Steal} {
				ch <- prometheus.MustNewConstMetric(c.cpu, prometheus.CounterValue, v, cpuLabel, mode)
			}
		}
	}
	if mi, err := c.proc.Meminfo(); err == nil && mi.MemTotalBytes != nil && mi.MemAvailableBytes != nil {
		ch <- prometheus.MustNewConstMetric(c.memTot, prometheus.GaugeValue, float64(*mi.MemTotalBytes))
		ch <- prometheus.MustNewConstMetric(c.memAv, prometheus.GaugeValue, float64(*mi.MemAvailableBytes))
	}
	if c.replay != nil {
		c.collectReplay(ch)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, path := range c.cgroups {
		// the driver's own cgroup source reads them, so the external source
		// and its built-in fallback measure the same thing
		cg, ok := c.sources[path]
		if !ok { // the cluster creates the cgroups after the exporter starts
			var err error
			if cg, err = usage.NewCgroup(cgroupRoot, path, guard.Resources{}); err != nil {
				continue
			}
			c.sources[path] = cg
		}
		if sec, mem, at, err := timedCounters(cg); err == nil {
			// stamped with when they were read, as cAdvisor stamps its series
			ch <- prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(c.cgCPU, prometheus.CounterValue, sec, path))
			ch <- prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(c.cgMem, prometheus.GaugeValue, mem, path))
		}
	}
}

// stampWidth is how uncertain a stamp may be: the stamps have a millisecond's
// resolution, and a read the exporter's thread was preempted in the middle of
// is read again.
const stampWidth = time.Millisecond

// timedCounters reads a cgroup's counters between two clock readings and
// stamps them with the middle, reading again (up to three times) while the
// two clock readings are further apart than stampWidth.
func timedCounters(cg *usage.Cgroup) (cpuSeconds, memoryBytes float64, at time.Time, err error) {
	var r usagesource.Reading
	for range 3 {
		r, err = usagesource.ReadCounter(time.Now, func() (float64, error) {
			var err error
			cpuSeconds, memoryBytes, err = cg.Counters()
			return cpuSeconds, err
		})
		if err != nil || r.Width() <= stampWidth {
			break
		}
	}
	return cpuSeconds, memoryBytes, r.At(), err
}

// Serve serves the exporter's /metrics on listen until ctx ends: the host,
// and each of cgroups read from the cgroup, or, with rep, each cgroup rep
// maps to a tenant replayed from its trace (cgroups must then be empty).
func Serve(ctx context.Context, listen string, cgroups []string, rep *Replay) error {
	c, err := newExporterCollector(cgroups, rep)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
