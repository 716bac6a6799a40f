// Package stages sequences a harvested DAG job's stages on Nomad: a stage
// (task group) whose upstream stages have not finished was registered at
// count 0 by the admission proxy; it is scaled to its declared count when
// every upstream stage completes, and stopped with an error when one fails
// for good. It is pure: the placer feeds it group states and applies the
// actions through Nomad's scale API.
package stages

import (
	"fmt"
	"sort"
	"strings"
)

// Group is the state of one task group.
type Group struct {
	Name     string
	After    []string
	Count    int // the group's count in the job now
	Declared int // the count the user asked for (deferred groups: from the proxy's record)
	Complete int // allocations that completed
	Failed   int // allocations that failed with no replacement coming
	// SelfFailed counts the allocations whose task failed by itself, not
	// evicted or refused by the harvest driver, replaced or not.
	SelfFailed int
	Active     int // allocations pending or running
}

// Done reports whether every task of the group has completed.
func (g Group) Done() bool { return g.Declared == 0 || (g.Complete >= g.Declared && g.Active == 0) }

// Action is one scale request.
type Action struct {
	Group   string
	Count   int
	Error   bool
	Message string
}

// Next returns the scale actions the group states call for.
func Next(groups []Group) []Action {
	byName := map[string]Group{}
	for _, g := range groups {
		byName[g.Name] = g
	}
	var out []Action
	for _, g := range groups {
		if len(g.After) == 0 || g.Count != 0 || g.Declared == 0 || g.Complete+g.Failed+g.Active > 0 {
			continue // not deferred, or already started
		}
		var failed, waiting []string
		for _, up := range g.After {
			u := byName[up]
			switch {
			case u.Failed > 0 && u.Active == 0:
				failed = append(failed, up)
			case !u.Done() || (u.Count == 0 && u.Declared > 0):
				waiting = append(waiting, up)
			}
		}
		sort.Strings(failed)
		switch {
		case len(failed) > 0:
			out = append(out, Action{Group: g.Name, Count: 0, Error: true,
				Message: fmt.Sprintf("harvest: stage %q not started: upstream stage %s failed", g.Name, strings.Join(failed, ", "))})
		case len(waiting) == 0:
			out = append(out, Action{Group: g.Name, Count: g.Declared,
				Message: fmt.Sprintf("harvest: upstream stages of %q (%s) completed", g.Name, strings.Join(g.After, ", "))})
		}
	}
	return out
}
