package jobtype

import (
	"sort"
	"time"
)

// Run is one past job run: how long it took and how much work (core-seconds)
// it did.
type Run struct {
	Length time.Duration
	Work   float64
}

// Split sets the thresholds from the job history and the capacity of each
// type's preferred classes, as Section 4.1 of history-based-harvesting.txt
// does ("the total computation required by long jobs should be proportional
// to the computational capacity of constant primary tenants"): jobs are
// ordered by length, the shortest ones doing shortShare of all work become
// short, the longest ones doing longShare become long. Shares are of the
// total (0-1); with no runs it returns the defaults.
func Split(runs []Run, shortShare, longShare float64) Thresholds {
	if len(runs) == 0 {
		return Default()
	}
	sorted := append([]Run(nil), runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Length < sorted[j].Length })
	var total float64
	for _, r := range sorted {
		total += r.Work
	}
	th := Thresholds{Short: sorted[0].Length, Long: sorted[len(sorted)-1].Length}
	var acc float64
	for _, r := range sorted { // short: below the length where shortShare of the work is done
		if acc+r.Work > shortShare*total {
			th.Short = r.Length
			break
		}
		acc += r.Work
	}
	acc = 0
	for i := len(sorted) - 1; i >= 0; i-- { // long: above the length from which longShare is left
		if acc+sorted[i].Work > longShare*total {
			th.Long = sorted[i].Length
			break
		}
		acc += sorted[i].Work
	}
	if th.Long < th.Short {
		th.Long = th.Short
	}
	return th
}
