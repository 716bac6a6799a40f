package metricset

import (
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sum adds the series whose labels include the wanted ones, from a
// registry and from its /metrics page alike.
func TestSumAddsTheSeriesWithTheLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "h"}, []string{"plugin", "reason"})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x_cores", Help: "h"})
	empty := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_empty_total", Help: "h"}, []string{"l"})
	reg.MustRegister(c, g, empty)
	c.WithLabelValues("a", "cpu").Add(2)
	c.WithLabelValues("a", "memory").Add(3)
	c.WithLabelValues("b", "cpu").Add(5)
	g.Set(1.5)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	gathered, err := Gather(reg)
	if err != nil {
		t.Fatal(err)
	}
	scraped, err := Scrape(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for what, f := range map[string]Families{"gathered": gathered, "scraped": scraped} {
		for _, c := range []struct {
			name   string
			labels map[string]string
			sum    float64
			series int
		}{
			{"x_total", nil, 10, 3},
			{"x_total", map[string]string{"plugin": "a"}, 5, 2},
			{"x_total", map[string]string{"plugin": "a", "reason": "cpu"}, 2, 1},
			{"x_total", map[string]string{"plugin": "c"}, 0, 0},
			{"x_total", map[string]string{"node": "a"}, 0, 0}, // a label no series has
			{"x_cores", nil, 1.5, 1},
			{"x_missing", nil, 0, 0},
		} {
			if sum, n := f.Sum(c.name, c.labels); sum != c.sum || n != c.series {
				t.Errorf("%s: Sum(%s, %v) = %v over %d series, want %v over %d", what, c.name, c.labels, sum, n, c.sum, c.series)
			}
		}
		if !f.Has("x_total") || f.Has("x_empty_total") || f.Has("x_missing") {
			t.Errorf("%s: Has is wrong", what)
		}
	}
}
