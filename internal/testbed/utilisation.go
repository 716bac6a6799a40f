package testbed

import (
	"time"
)

// utilisationWindow is the report's utilisation step (trace seconds).
const utilisationWindow = 600

// UtilisationPoint is one window of a run: the share of all the clients'
// cores the harvested allocations held (each one core, counted while its
// task ran) and the share the primaries used (their replayed trace), from
// TraceSeconds after the span's start.
type UtilisationPoint struct {
	TraceSeconds float64 `json:"trace_seconds"`
	Harvested    float64 `json:"harvested_share"`
	Primary      float64 `json:"primary_share"`
}

// utilisation cuts began..end into windows of window (wall) and averages
// the harvested allocations' cores and the primaries' over each, the
// primaries sampled ten times a window (they step every 2-minute slot).
func utilisation(allocs []alloc, primary primaryAt, nodes []string, cores float64, began, end time.Time, window time.Duration, speedup float64) []UtilisationPoint {
	if window <= 0 || !end.After(began) || len(nodes) == 0 {
		return nil
	}
	total := cores * float64(len(nodes))
	var out []UtilisationPoint
	for from := began; from.Before(end); from = from.Add(window) {
		to := from.Add(window)
		if to.After(end) {
			to = end
		}
		span := to.Sub(from).Seconds()
		var held float64
		for _, a := range allocs {
			if a.Started.IsZero() {
				continue
			}
			s, f := a.Started, finishOr(a, end)
			if s.Before(from) {
				s = from
			}
			if f.After(to) {
				f = to
			}
			if f.After(s) {
				held += f.Sub(s).Seconds() / span
			}
		}
		var used float64
		const samples = 10
		for i := range samples {
			at := from.Add(time.Duration((float64(i) + 0.5) / samples * float64(to.Sub(from))))
			for _, n := range nodes {
				p, _ := primary(n, at)
				used += p / samples
			}
		}
		out = append(out, UtilisationPoint{TraceSeconds: from.Sub(began).Seconds() * speedup, Harvested: held / total, Primary: used / total})
	}
	return out
}
