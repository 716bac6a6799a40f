package exporter

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/harvest-platform/harvest/internal/replay"
)

const traceCSV = `tenant,timestamp,cpu_percent
search/frontend,2026-01-01T00:00:00Z,50
search/frontend,2026-01-01T00:02:00Z,100
ads/indexer,2026-01-01T00:00:00Z,10
`

// gather collects c once and returns its container series by metric and id.
func gather(t *testing.T, c prometheus.Collector) map[string]map[string]*dto.Metric {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]*dto.Metric{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "container_") {
			continue
		}
		out[mf.GetName()] = map[string]*dto.Metric{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "id" {
					out[mf.GetName()][l.GetValue()] = m
				}
			}
		}
	}
	return out
}

// TestReplayServesTheTracesCounters: each cgroup's CPU counter is its
// tenant's CPUSeconds at the time it was stamped with, its memory the
// constant, and the host's series are still there.
func TestReplayServesTheTracesCounters(t *testing.T) {
	tr, err := replay.Read(strings.NewReader(traceCSV))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tr.Start, tr.Began, tr.Speedup = time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC), began, 60
	now := began.Add(2*time.Second + 500*time.Millisecond + 700*time.Microsecond)
	rep := &Replay{Trace: tr, NodeCores: 12, Now: func() time.Time { return now },
		Tenants: map[string]string{"/harvest-15000-client-1-primary": "search/frontend", "/harvest-15000-client-2-primary": "ads/indexer"}}
	c, err := newExporterCollector(nil, rep)
	if err != nil {
		t.Fatal(err)
	}
	got := gather(t, c)
	stamp := began.Add(2500 * time.Millisecond) // to the millisecond
	// client-1: 1 wall second at 6 cores (trace 00:01-00:02 at 50%), then 1.5 at 12
	for id, want := range map[string]float64{"/harvest-15000-client-1-primary": 6 + 1.5*12, "/harvest-15000-client-2-primary": 2.5 * 1.2} {
		m := got["container_cpu_usage_seconds_total"][id]
		if m == nil {
			t.Fatalf("no CPU series for %s: %v", id, got)
		}
		if v := m.GetCounter().GetValue(); v < want-1e-9 || v > want+1e-9 {
			t.Errorf("%s: CPU seconds %v, want %v", id, v, want)
		}
		if m.GetTimestampMs() != stamp.UnixMilli() {
			t.Errorf("%s: stamped %d, want %d", id, m.GetTimestampMs(), stamp.UnixMilli())
		}
		if mem := got["container_memory_usage_bytes"][id]; mem.GetGauge().GetValue() != DefaultReplayMemory || mem.GetTimestampMs() != stamp.UnixMilli() {
			t.Errorf("%s: memory %v", id, mem)
		}
	}
	// a later scrape: the counter has grown by what the trace says
	now = now.Add(time.Second)
	if v := gather(t, c)["container_cpu_usage_seconds_total"]["/harvest-15000-client-1-primary"].GetCounter().GetValue(); v < 6+2.5*12-1e-9 || v > 6+2.5*12+1e-9 {
		t.Errorf("a second later: %v", v)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, _ := reg.Gather()
	host := false
	for _, mf := range mfs {
		host = host || mf.GetName() == "node_cpu_seconds_total"
	}
	if !host {
		t.Error("the host's node_cpu_seconds_total is gone in replay mode")
	}
}

func TestReplayRefusesWhatItCannotServe(t *testing.T) {
	tr, err := replay.Read(strings.NewReader(traceCSV))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		cgroups []string
		rep     Replay
		want    string
	}{
		"missing tenant":   {nil, Replay{Trace: tr, NodeCores: 4, Tenants: map[string]string{"/a": "mail/store"}}, "mail/store"},
		"no cores":         {nil, Replay{Trace: tr, Tenants: map[string]string{"/a": "ads/indexer"}}, "node cores"},
		"no tenants":       {nil, Replay{Trace: tr, NodeCores: 4}, "at least one"},
		"real cgroups too": {[]string{"/b"}, Replay{Trace: tr, NodeCores: 4, Tenants: map[string]string{"/a": "ads/indexer"}}, "none read for real"},
	} {
		if _, err := newExporterCollector(c.cgroups, &c.rep); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}
