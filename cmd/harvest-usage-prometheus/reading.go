package main

import (
	"context"
	"errors"
	"math"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// reading is what one scrape says, before rating. Each counter carries the
// time it was true and how uncertain that time is: the sample's own
// timestamp when the exporter exposes one (cAdvisor does; certain to its
// millisecond), else the middle of the scrape, from when it began to when
// its body had arrived (the counter was read somewhere in between). A window
// whose two readings leave its length uncertain by more than
// usagesource.MaxTimingError of it is not rated (source.go): on a loaded
// host a scrape's delays can be as long as the interval itself.
type reading struct {
	at                 time.Time     // of the host counters
	atWidth            time.Duration // how uncertain at is
	primaryAt          time.Time     // of the primary's CPU counter
	primaryAtWidth     time.Duration
	cpus               int
	hostBusySeconds    float64 // every mode of node_cpu_seconds_total but idle and iowait
	memTotal, memAvail float64
	primaryCPUSeconds  float64
	primaryMemBytes    float64
}

// read scrapes the endpoint(s) into a reading.
func (s *source) read(ctx context.Context) (*reading, error) {
	began := time.Now()
	fams, arrived, err := s.fetch(ctx, s.cfg.url)
	if err != nil {
		return nil, err
	}
	r := &reading{}
	r.at, r.atWidth = stamped(fams["node_cpu_seconds_total"], nil, began, arrived)
	cpu, ok := fams["node_cpu_seconds_total"]
	if !ok {
		return nil, errors.New("no node_cpu_seconds_total: is url a node_exporter endpoint?")
	}
	cpus := map[string]bool{}
	for _, m := range cpu.GetMetric() {
		l := labels(m)
		cpus[l["cpu"]] = true
		if l["mode"] != "idle" && l["mode"] != "iowait" {
			r.hostBusySeconds += value(m)
		}
	}
	r.cpus = len(cpus)
	var okT, okA bool
	r.memTotal, okT = sum(fams["node_memory_MemTotal_bytes"], nil)
	r.memAvail, okA = sum(fams["node_memory_MemAvailable_bytes"], nil)
	if !okT || !okA {
		return nil, errors.New("no node_memory_MemTotal_bytes or node_memory_MemAvailable_bytes")
	}
	if s.cfg.primaryCPU == "" {
		return r, nil
	}
	pf, pbegan, parrived := fams, began, arrived
	if s.cfg.primaryURL != s.cfg.url {
		pbegan = time.Now()
		if pf, parrived, err = s.fetch(ctx, s.cfg.primaryURL); err != nil {
			return nil, err
		}
	}
	r.primaryAt, r.primaryAtWidth = stamped(pf[s.cfg.primaryCPU], s.cfg.primaryLabels, pbegan, parrived)
	var okC, okM bool
	r.primaryCPUSeconds, okC = sum(pf[s.cfg.primaryCPU], s.cfg.primaryLabels)
	r.primaryMemBytes, okM = sum(pf[s.cfg.primaryMem], s.cfg.primaryLabels)
	if !okC || !okM {
		return nil, errors.New("no series of " + s.cfg.primaryCPU + " and " + s.cfg.primaryMem + " match primary_labels")
	}
	return r, nil
}

// usage rates cur against prev. A counter that went down was reset (the
// exporter or the host restarted): its increase is its new value, as
// Prometheus's rate() takes it.
func usage(cfg *config, prev, cur *reading) usagesource.Usage {
	rate := func(a, b float64, from, to time.Time) float64 {
		d := b - a
		if d < 0 {
			d = b
		}
		secs := to.Sub(from).Seconds()
		if secs <= 0 {
			return math.NaN() // the guard counts a NaN as a failed sample
		}
		return d / secs
	}
	u := usagesource.Usage{
		Time:                cur.at,
		CapacityCPUCores:    float64(cur.cpus),
		CapacityMemoryBytes: uint64(cur.memTotal),
		HostMeasured:        cfg.primaryCPU == "",
		HostCPUCores:        rate(prev.hostBusySeconds, cur.hostBusySeconds, prev.at, cur.at),
		HostMemoryBytes:     uint64(math.Max(0, cur.memTotal-cur.memAvail)),
	}
	if !u.HostMeasured {
		u.PrimaryCPUCores = rate(prev.primaryCPUSeconds, cur.primaryCPUSeconds, prev.primaryAt, cur.primaryAt)
		u.PrimaryMemoryBytes = uint64(math.Max(0, cur.primaryMemBytes))
	}
	if cfg.capacityCPU > 0 {
		u.CapacityCPUCores = cfg.capacityCPU
	}
	if cfg.capacityMem > 0 {
		u.CapacityMemoryBytes = cfg.capacityMem
	}
	return u
}

func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value reads a counter, gauge or untyped sample.
func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// stamped is the latest explicit timestamp among the family's series that
// match (uncertain by its millisecond), or otherwise the middle of the
// scrape (uncertain by its length).
func stamped(f *dto.MetricFamily, match map[string]string, began, arrived time.Time) (time.Time, time.Duration) {
	var latest int64
	for _, m := range matching(f, match) {
		latest = max(latest, m.GetTimestampMs())
	}
	if latest <= 0 {
		width := max(0, arrived.Sub(began))
		return began.Add(width / 2), width
	}
	return time.UnixMilli(latest), time.Millisecond
}

// uncertain says the window from prev to cur is too uncertain to rate: the
// times of the readings it is measured from (the primary's counter when one
// is read, else the host's) are uncertain by more than
// usagesource.MaxTimingError of its length.
func uncertain(prev, cur *reading, primary bool) bool {
	if math.IsNaN(cur.hostBusySeconds) || (primary && math.IsNaN(cur.primaryCPUSeconds)) {
		return false // a counter that reads NaN is news: it rates as NaN, a failed sample
	}
	from, to, w1, w2 := prev.at, cur.at, prev.atWidth, cur.atWidth
	if primary {
		from, to, w1, w2 = prev.primaryAt, cur.primaryAt, prev.primaryAtWidth, cur.primaryAtWidth
	}
	length := to.Sub(from)
	return length > 0 && float64(w1+w2) > usagesource.MaxTimingError*float64(length)
}

// matching is the family's series whose labels match (all of them when
// match is empty).
func matching(f *dto.MetricFamily, match map[string]string) []*dto.Metric {
	var out []*dto.Metric
next:
	for _, m := range f.GetMetric() {
		l := labels(m)
		for k, v := range match {
			if l[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// sum adds the family's series whose labels match (all of them when match
// is empty); ok is false when none does.
func sum(f *dto.MetricFamily, match map[string]string) (total float64, ok bool) {
	for _, m := range matching(f, match) {
		total += value(m)
		ok = true
	}
	return total, ok
}
