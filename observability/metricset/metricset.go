// Package metricset names the Prometheus series a component serves, from
// its real collectors: a Recorder is a prometheus.Registerer that keeps what
// is registered in it, and Names describes those collectors the way the
// text exposition names them (a histogram as its _bucket, _sum and _count).
// Components build their metrics into a Recorder to export MetricNames,
// which observability's test checks the dashboard and the alerts against.
package metricset

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Recorder is a prometheus.Registerer that keeps the collectors registered
// in it (it serves nothing).
type Recorder struct {
	collectors []prometheus.Collector
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Register keeps c.
func (r *Recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

// MustRegister keeps cs.
func (r *Recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

// Unregister forgets c.
func (r *Recorder) Unregister(c prometheus.Collector) bool {
	for i, k := range r.collectors {
		if k == c {
			r.collectors = append(r.collectors[:i], r.collectors[i+1:]...)
			return true
		}
	}
	return false
}

// kind is how a series family is exposed.
type kind int

const (
	plain     kind = iota // counter, gauge, untyped: the name itself
	histogram             // name_bucket, name_sum, name_count
	summary               // name (quantiles), name_sum, name_count
)

// Names returns the series names the recorded collectors expose, sorted and
// without duplicates. It panics on a descriptor it cannot name (a
// client_golang whose Desc no longer prints its fqName), so a check built
// on it fails loudly rather than passing on an empty list.
func (r *Recorder) Names() []string {
	kinds := map[string]kind{}
	for _, c := range r.collectors {
		byDesc := collectedKinds(c)
		descs := make(chan *prometheus.Desc)
		go func() { c.Describe(descs); close(descs) }()
		for d := range descs {
			name := fqName(d)
			k := byDesc[d.String()]
			switch c.(type) {
			case *prometheus.HistogramVec:
				k = histogram
			case *prometheus.SummaryVec:
				k = summary
			}
			kinds[name] = k
		}
	}
	var out []string
	for name, k := range kinds {
		switch k {
		case histogram:
			out = append(out, name+"_bucket", name+"_sum", name+"_count")
		case summary:
			out = append(out, name, name+"_sum", name+"_count")
		default:
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// collectedKinds collects c once and returns the kind of every descriptor
// it emitted a metric for (a vector without children emits nothing: its
// kind comes from its Go type).
func collectedKinds(c prometheus.Collector) map[string]kind {
	ms := make(chan prometheus.Metric)
	go func() { c.Collect(ms); close(ms) }()
	kinds := map[string]kind{}
	for m := range ms {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			continue
		}
		k := plain
		switch {
		case pb.Histogram != nil:
			k = histogram
		case pb.Summary != nil:
			k = summary
		}
		kinds[m.Desc().String()] = k
	}
	return kinds
}

var fqNameRE = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*")`)

// fqName is d's metric name. client_golang has no accessor for it; its
// String has printed `Desc{fqName: "...", ...}` since its first release.
func fqName(d *prometheus.Desc) string {
	m := fqNameRE.FindStringSubmatch(d.String())
	if m == nil {
		panic(fmt.Sprintf("metricset: cannot name the descriptor %s", d))
	}
	name, err := strconv.Unquote(m[1])
	if err != nil || name == "" {
		panic(fmt.Sprintf("metricset: cannot name the descriptor %s", d))
	}
	return name
}
