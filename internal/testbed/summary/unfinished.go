package summary

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/harvest-platform/harvest/internal/testbed"
)

// unfinishedTable is a row per Nomad job of every run's unfinished jobs
// (none: ""): its status, its groups' counts, its evaluations and why a
// group waits.
func unfinishedTable(reports []*testbed.Report) string {
	var b strings.Builder
	for _, r := range reports {
		for _, u := range r.UnfinishedJobs {
			if b.Len() == 0 {
				b.WriteString("\nThe unfinished jobs at the end, as Nomad held them (each group's queued/starting/running/failed/lost/complete allocations; why the newest blocked evaluation placed nothing):\n\n")
				b.WriteString("| policy | seed | job | class | stages | Nomad job | status | groups | evaluations | blocked |\n")
				b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
			}
			if len(u.Nomad) == 0 {
				fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | none | | | | |\n", r.Label(), r.Seed, u.ID, u.Class, u.Stages)
			}
			for _, n := range u.Nomad {
				status := n.Status
				if n.Stop {
					status += " (stopped)"
				}
				fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %s | %s | %s | %s | %s |\n", r.Label(), r.Seed, u.ID, u.Class, u.Stages,
					n.ID, status, pairs(n.Groups), pairs(n.Evaluations), pairs(n.Blocked))
			}
		}
	}
	return b.String()
}

// pairs is a map as "key value" pairs in key order, "; " between them.
func pairs[V any](m map[string]V) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %v", k, m[k]))
	}
	return strings.Join(out, "; ")
}
