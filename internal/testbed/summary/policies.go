package summary

import (
	"fmt"
	"math"
	"strings"

	"github.com/harvest-platform/harvest/internal/testbed"
)

// spread is a figure over a policy's seeds: its mean, min and max.
type spread struct{ mean, min, max float64 }

func spreadOf(values []float64) spread {
	s := spread{min: math.Inf(1), max: math.Inf(-1)}
	for _, v := range values {
		s.mean += v / float64(len(values))
		s.min, s.max = math.Min(s.min, v), math.Max(s.max, v)
	}
	return s
}

func (s spread) String() string { return s.format(0) }

// format writes the spread with that many decimals ("-": no value).
func (s spread) format(decimals int) string {
	if math.IsInf(s.min, 0) {
		return "-"
	}
	if s.min == s.max {
		return fmt.Sprintf("%.*f", decimals, s.mean)
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)", decimals, s.mean, decimals, s.min, decimals, s.max)
}

// policyTable is a row per policy (with its deviations) over its seeds:
// each figure's mean with its min-max, the testbed's beside the
// simulator's prediction given each run's start delay, and the real
// primary's p99 per minute and CPU wait when the runs had one (the issue's
// "H against PT over at least 3 seeds with min-max", and Figure 10's
// comparison with the no-harvesting runs' own spread). "" when no policy
// ran more than one seed.
func policyTable(reports []*testbed.Report) string {
	var order []string
	byLabel := map[string][]*testbed.Report{}
	several := false
	for _, r := range reports {
		l := r.Label()
		if byLabel[l] == nil {
			order = append(order, l)
		}
		byLabel[l] = append(byLabel[l], r)
		several = several || len(byLabel[l]) > 1
	}
	if !several {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nPer policy over its seeds (mean, min-max; job times in trace seconds, within the span as the simulator counts them):\n\n")
	b.WriteString("| policy | seeds | finished in span | mean job s | sim with the start delay: mean job s | kills | sim kills | wasted task-s | sim wasted | refused starts | breaches over the bound | real primary p99/minute mean ms | its p90 ms | its wait per CPU-s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, l := range order {
		runs := byLabel[l]
		var seeds []string
		figure := func(of func(*testbed.Report) (float64, bool)) spread {
			var vs []float64
			for _, r := range runs {
				if v, ok := of(r); ok {
					vs = append(vs, v)
				}
			}
			return spreadOf(vs)
		}
		sim := func(of func(testbed.SimPrediction) float64) spread {
			return figure(func(r *testbed.Report) (float64, bool) {
				if r.SimulatorWithDelay == nil || r.Policy == testbed.None {
					return 0, false
				}
				return of(*r.SimulatorWithDelay), true
			})
		}
		primary := func(of func(testbed.RealPrimaryReport) float64) spread {
			return figure(func(r *testbed.Report) (float64, bool) {
				if r.RealPrimary == nil || len(r.RealPrimary.Minutes) == 0 {
					return 0, false
				}
				return of(*r.RealPrimary), true
			})
		}
		overBound := 0
		for _, r := range runs {
			seeds = append(seeds, fmt.Sprint(r.Seed))
			overBound += r.BreachesOverBound
		}
		jobs := func(of func(*testbed.Report) float64) spread {
			return figure(func(r *testbed.Report) (float64, bool) { return of(r), r.Policy != testbed.None })
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", l, strings.Join(seeds, ","),
			jobs(func(r *testbed.Report) float64 { return float64(r.FinishedInSpan) }),
			figure(func(r *testbed.Report) (float64, bool) { return r.JobSecondsInSpan.Mean, r.FinishedInSpan > 0 }),
			sim(func(p testbed.SimPrediction) float64 { return p.MeanJobSeconds }),
			jobs(func(r *testbed.Report) float64 { return float64(r.Kills) }),
			sim(func(p testbed.SimPrediction) float64 { return float64(p.Kills) }),
			jobs(func(r *testbed.Report) float64 { return r.WastedTaskSeconds }),
			sim(func(p testbed.SimPrediction) float64 { return p.WastedTaskSeconds }),
			jobs(func(r *testbed.Report) float64 { return float64(r.Refused) }),
			overBound,
			primary(func(p testbed.RealPrimaryReport) float64 { return p.P99PerMinute.Mean }),
			primary(func(p testbed.RealPrimaryReport) float64 { return p.P99PerMinute.P90 }),
			primary(func(p testbed.RealPrimaryReport) float64 { return p.WaitPerCPUSecond }).format(2))
	}
	return b.String()
}
