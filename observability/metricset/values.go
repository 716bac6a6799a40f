package metricset

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are metric families by name, as a registry gathers them or a
// /metrics page serves them: what tests and tools read values from.
type Families map[string]*dto.MetricFamily

// Gather reads g's families.
func Gather(g prometheus.Gatherer) (Families, error) {
	fams, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := make(Families, len(fams))
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out, nil
}

// Scrape reads the Prometheus text page at url (such as
// http://127.0.0.1:4649/metrics).
func Scrape(url string) (Families, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return Families(fams), nil
}

// Has says whether name has a family with at least one series (a counter
// vector has none until its first increment).
func (f Families) Has(name string) bool { return len(f[name].GetMetric()) > 0 }

// Sum adds up name's counter and gauge series whose labels include every
// one of labels (nil: every series), and says how many series it added.
func (f Families) Sum(name string, labels map[string]string) (sum float64, series int) {
	for _, m := range f[name].GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		default:
			continue
		}
		series++
	}
	return sum, series
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			found++
		}
	}
	return found == len(want)
}
