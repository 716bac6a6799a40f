package observability

import (
	"slices"
	"testing"
)

func TestMetricsIn(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`harvest_driver_fail_safe`, []string{"harvest_driver_fail_safe"}},
		{`max by (instance) (harvest_driver_fail_safe) == 1`, []string{"harvest_driver_fail_safe"}},
		{`sum by (instance, reason) (rate(harvest_driver_evictions_total{instance=~"$node",reason!="stale"}[$__rate_interval]))`,
			[]string{"harvest_driver_evictions_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(a_bucket{kind="rewrite"}[5m]))) > 5`, []string{"a_bucket"}},
		{`a{x="}{[("} / on (instance) group_left (node) b offset 5m unless c and bool d`, []string{"a", "b", "c", "d"}},
		{`time() - max(x > 0) > 3 * 3600 or vector(1e3)`, []string{"x"}},
		{`label_values(harvest_blob_objects, instance)`, []string{"harvest_blob_objects", "instance"}},
		{"a # a comment naming b\n+ c[5m:1m]", []string{"a", "c"}},
		{`sum without(job) (x) + ignoring (a, b) y`, []string{"x", "y"}},
		{`${DS} + $node + m`, []string{"m"}},
	} {
		got, err := MetricsIn(tc.expr)
		if err != nil {
			t.Errorf("MetricsIn(%q): %v", tc.expr, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("MetricsIn(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestMetricsInRefusesUnbalanced(t *testing.T) {
	for _, expr := range []string{`rate(a[5m]`, `a{x="y"`, `a)`, `a{x="y}`, `rate(a[5m)]`, `sum(a})`} {
		if got, err := MetricsIn(expr); err == nil {
			t.Errorf("MetricsIn(%q) = %q, want an error", expr, got)
		}
	}
}
