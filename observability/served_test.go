package observability

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/driver"
	"github.com/harvest-platform/harvest/placer/agent"
	"github.com/harvest-platform/harvest/storage/front"
)

// served is every series the daemons serve, named from their real
// collectors: the driver's metrics_address (harvest_driver_*, harvest_plugin_*),
// the placer's /v1/metrics (harvest_placer_*, harvest_proxy_*, harvest_plugin_*)
// and the blob front's /v1/metrics (harvest_blob_*).
func served() map[string]bool {
	names := map[string]bool{}
	for _, l := range [][]string{driver.MetricNames(), agent.MetricNames(), front.MetricNames()} {
		for _, n := range l {
			names[n] = true
		}
	}
	return names
}

// use is one PromQL expression of the dashboard or the alerts.
type use struct{ where, expr string }

// unserved returns what is wrong with uses against the served names: an
// expression that does not scan, that selects no harvest_* series (the
// scanner missed it, or the panel is not about Harvest), or that selects a
// harvest_* series nobody serves (a histogram only as _bucket, _sum, _count).
func unserved(uses []use, served map[string]bool) []string {
	var problems []string
	for _, u := range uses {
		names, err := MetricsIn(u.expr)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", u.where, err))
			continue
		}
		harvest := 0
		for _, n := range names {
			if !strings.HasPrefix(n, "harvest_") {
				continue
			}
			harvest++
			if !served[n] {
				problems = append(problems, fmt.Sprintf("%s: %s is not a series Harvest serves (in %q)", u.where, n, u.expr))
			}
		}
		if harvest == 0 {
			problems = append(problems, fmt.Sprintf("%s: no harvest_* series in %q", u.where, u.expr))
		}
	}
	return problems
}

func TestServedNamesComeFromEveryComponent(t *testing.T) {
	s := served()
	// one series of each component's collectors, histograms as exposed: if
	// a MetricNames stopped describing its collectors, every check below
	// would be against too little
	for _, n := range []string{"harvest_driver_fail_safe", "harvest_plugin_up", "harvest_placer_classes",
		"harvest_proxy_request_seconds_bucket", "harvest_placer_escalations_total", "harvest_blob_node_up"} {
		if !s[n] {
			t.Errorf("served names lack %s", n)
		}
	}
	if s["harvest_proxy_request_seconds"] {
		t.Error("a histogram is served under its bare name: want only _bucket, _sum and _count")
	}
}

func TestDashboardUsesOnlyServedMetrics(t *testing.T) {
	uses := dashboardUses(t, parseDashboard(t, Dashboard))
	if len(uses) < 20 {
		t.Fatalf("only %d expressions found in the dashboard", len(uses))
	}
	for _, p := range unserved(uses, served()) {
		t.Error(p)
	}
}

func TestAlertsUseOnlyServedMetrics(t *testing.T) {
	var uses []use
	for _, r := range parseAlerts(t, Alerts) {
		uses = append(uses, use{"alert " + r.Alert, r.Expr})
	}
	if len(uses) < 10 {
		t.Fatalf("only %d alerts found", len(uses))
	}
	for _, p := range unserved(uses, served()) {
		t.Error(p)
	}
}

// TestTheCheckCatchesWhatIsNotServed keeps the check honest: a misspelt
// series, a histogram's bare name, a series in a variable query or behind
// an offset, and an expression with no Harvest series are all reported.
func TestTheCheckCatchesWhatIsNotServed(t *testing.T) {
	s := served()
	for _, tc := range []struct {
		expr, want string
	}{
		{`rate(harvest_driver_evictions_totl[5m])`, "harvest_driver_evictions_totl is not a series"},
		{`harvest_proxy_request_seconds{kind="error"}`, "harvest_proxy_request_seconds is not a series"},
		{`label_values(harvest_blob_node_upp, node)`, "harvest_blob_node_upp is not a series"},
		{`harvest_driver_fail_safe - harvest_driver_fail_safe offset 1h + harvest_placer_gone`, "harvest_placer_gone is not a series"},
		{`up == 0`, "no harvest_* series"},
		{`rate(harvest_blob_reads_total[5m)`, "unbalanced"},
	} {
		got := unserved([]use{{"test", tc.expr}}, s)
		if len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("unserved(%q) = %q, want one problem saying %q", tc.expr, got, tc.want)
		}
	}
	if got := unserved([]use{{"test", `histogram_quantile(0.9, sum by (le) (rate(harvest_proxy_request_seconds_bucket[5m])))`}}, s); len(got) != 0 {
		t.Errorf("a served histogram's _bucket was refused: %q", got)
	}
	// the dashboard with one series misspelt fails the check
	broken := strings.Replace(string(Dashboard), "harvest_driver_fail_safe", "harvest_driver_failsafe", 1)
	if got := unserved(dashboardUses(t, parseDashboard(t, []byte(broken))), s); !slices.ContainsFunc(got, func(p string) bool {
		return strings.Contains(p, "harvest_driver_failsafe is not a series")
	}) {
		t.Errorf("a misspelt series in the dashboard passed the check: %q", got)
	}
}
