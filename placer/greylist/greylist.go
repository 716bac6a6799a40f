// Package greylist is node reliability tracking from
// placement-escalation.txt: failures of harvested allocations are counted
// per node, leaving out evictions by the primary tenant's reserve,
// preemptions and failures that say nothing about the node (the task's own
// memory limit); counters reset on a schedule; a node over the threshold is
// greylisted and harvested jobs avoid it. Pure: the placer applies it
// through node meta and a constraint.
package greylist

import (
	"sort"
	"time"
)

// FailureKind is why an allocation ended badly.
type FailureKind string

const (
	NodeFault FailureKind = "node"       // counts against the node
	Evicted   FailureKind = "evicted"    // the harvest driver's reserve: not the node's fault
	Preempted FailureKind = "preempted"  // not the node's fault
	TaskFault FailureKind = "task-limit" // the task's own limits (OOM in its cgroup): node-independent
)

// Tracker counts node failures between resets.
type Tracker struct {
	Threshold int           // failures that greylist a node (3)
	Reset     time.Duration // counters start over this often (a few hours)
	counts    map[string]int
	since     time.Time
}

// NewTracker returns a tracker with the source's defaults.
func NewTracker(threshold int, reset time.Duration, now time.Time) *Tracker {
	return &Tracker{Threshold: threshold, Reset: reset, counts: map[string]int{}, since: now}
}

// Record counts a failure on node if it is the node's fault.
func (t *Tracker) Record(node string, kind FailureKind, now time.Time) {
	t.maybeReset(now)
	if kind == NodeFault {
		t.counts[node]++
	}
}

func (t *Tracker) maybeReset(now time.Time) {
	if t.Reset > 0 && now.Sub(t.since) >= t.Reset {
		t.counts, t.since = map[string]int{}, now
	}
}

// Greylisted lists the nodes at or over the threshold now, by name.
func (t *Tracker) Greylisted(now time.Time) []string {
	t.maybeReset(now)
	var out []string
	for n, c := range t.counts {
		if c >= t.Threshold {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Counts returns the failures counted per node since the last reset.
func (t *Tracker) Counts(now time.Time) map[string]int {
	t.maybeReset(now)
	out := make(map[string]int, len(t.counts))
	for n, c := range t.counts {
		out[n] = c
	}
	return out
}
