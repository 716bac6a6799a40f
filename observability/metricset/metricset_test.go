package metricset

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestNamesAsExposed(t *testing.T) {
	r := NewRecorder()
	r.MustRegister(
		prometheus.NewCounter(prometheus.CounterOpts{Namespace: "x", Subsystem: "a", Name: "total", Help: "h"}),
		prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x_vec", Help: "h"}, []string{"l"}),
		prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x_hist", Help: "h"}),
		prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "x_hist_vec", Help: "h"}, []string{"l"}),
		prometheus.NewSummary(prometheus.SummaryOpts{Name: "x_sum", Help: "h \"quoted\""}),
	)
	if err := r.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x_func_total", Help: "h"}, func() float64 { return 1 })); err != nil {
		t.Fatal(err)
	}
	gone := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x_gone", Help: "h"})
	r.MustRegister(gone)
	if !r.Unregister(gone) {
		t.Fatal("Unregister did not find a registered collector")
	}
	want := []string{"x_a_total", "x_func_total", "x_hist_bucket", "x_hist_count", "x_hist_sum",
		"x_hist_vec_bucket", "x_hist_vec_count", "x_hist_vec_sum", "x_sum", "x_sum_count", "x_sum_sum", "x_vec"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
}
