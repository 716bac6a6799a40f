package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/harvest-platform/harvest/placer/maintenance"
)

// planProfile is "yesterday": every rule's workload over the profile
// window, and the threshold the urgency picks from it.
type planProfile struct {
	from, to   time.Time
	step       time.Duration
	urgency    int
	runs, jobs int       // that ran in the window
	oldest     time.Time // the oldest run Nomad still holds
	values     map[string][]float64
	threshold  map[string]float64
}

func newPlanProfile(runs []maintenance.Alloc, from, to time.Time, step time.Duration, urgency int) (*planProfile, error) {
	p := &planProfile{from: from, to: to, step: step, urgency: urgency,
		values: map[string][]float64{}, threshold: map[string]float64{}}
	p.runs, p.jobs = maintenance.Ran(runs, from, to)
	if p.runs == 0 {
		return nil, fmt.Errorf("nothing ran in the last %s: Nomad holds no batch allocation that ran then (it garbage-collects finished ones), so there is no workload to profile; run batch work first, or profile a longer -profile-window if older work is still held", to.Sub(from))
	}
	for _, r := range runs {
		if p.oldest.IsZero() || r.Start.Before(p.oldest) {
			p.oldest = r.Start
		}
	}
	for _, r := range planRules {
		p.values[r.name] = maintenance.Profile(runs, r.metric, from, to, step)
	}
	if slices.Max(p.values["cl"]) == 0 {
		return nil, fmt.Errorf("the %d batch task runs of the last %s all fell between the profile's samples, every %s: use a shorter -step, or a shorter -profile-window around them",
			p.runs, to.Sub(from), step)
	}
	for _, r := range planRules {
		th, err := maintenance.Threshold(p.values[r.name], urgency)
		if err != nil {
			return nil, err
		}
		p.threshold[r.name] = th
	}
	return p, nil
}

// print shows the profile's percentiles for every rule and the chosen
// rule's threshold, with the other's for comparison.
func (p *planProfile) print(w io.Writer, chosen planRule) {
	n := len(p.values[chosen.name])
	fmt.Fprintf(w, "Profile of the last %s of batch work (%s to %s, every %s: %d samples): %d task runs of %d jobs\n",
		p.to.Sub(p.from), p.from.UTC().Format(time.RFC3339), p.to.UTC().Format(time.RFC3339), p.step, n, p.runs, p.jobs)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "RULE\tUNIT\tMIN\tP1\tP5\tP10\tP20\tP50\tMAX\tTHRESHOLD (P%d)\t\n", p.urgency)
	for _, r := range planRules {
		v := p.values[r.name]
		fmt.Fprintf(tw, "%s\t%s\t%.0f", r.name, r.unit, slices.Min(v))
		for _, pc := range []int{1, 5, 10, 20, 50} {
			th, _ := maintenance.Threshold(v, pc)
			fmt.Fprintf(tw, "\t%.0f", th)
		}
		fmt.Fprintf(tw, "\t%.0f\t%.0f\t\n", slices.Max(v), p.threshold[r.name])
	}
	tw.Flush()
	for _, r := range planRules {
		role := "chosen"
		if r.name != chosen.name {
			role = "for comparison"
		}
		fmt.Fprintf(w, "Urgency %d: by %s (%s, %s), start when it is at or below %.0f %s\n",
			p.urgency, r.what, r.name, role, p.threshold[r.name], r.unit)
	}
	if gap := p.oldest.Sub(p.from); gap > p.to.Sub(p.from)/10 {
		fmt.Fprintf(w, "Note: the oldest run Nomad still holds started %s after the window began; the profile counts the time before as idle (a shorter -profile-window leaves it out)\n",
			gap.Round(time.Second))
	}
}
