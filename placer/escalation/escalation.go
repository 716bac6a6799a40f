// Package escalation holds two placement policies from
// placement-escalation.txt: node reliability tracking (greylisting) and
// placement escalation. Failures of harvested allocations are counted per
// node, leaving out evictions by the primary tenant's reserve, preemptions
// and failures that say nothing about the node (the task's own memory
// limit); counters reset on a schedule; a node over the threshold is
// greylisted and harvested jobs avoid it. A job that stays blocked on its
// classes longer than a delay is relaxed step by step: more classes, then
// any harvested node. Pure: the placer applies it through node meta and
// constraints.
package escalation

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

// Step is an escalation level of a blocked job's placement.
type Step int

const (
	Chosen    Step = iota // the classes Algorithm 1 chose
	MoreClass             // those plus the next classes by weighted room
	AnyNode               // any harvested node (still avoiding greylisted ones)
)

func (s Step) String() string {
	return [...]string{"chosen-classes", "more-classes", "any-harvested-node"}[s]
}

// Escalate returns the step a job blocked since blockedSince should be at:
// one step further for every delay it has waited, up to AnyNode.
func Escalate(blockedSince, now time.Time, delay time.Duration) Step {
	if blockedSince.IsZero() || delay <= 0 || now.Before(blockedSince) {
		return Chosen
	}
	return Step(min(int(now.Sub(blockedSince)/delay), int(AnyNode)))
}

// Widen returns the classes a job may use at a step: at MoreClass the
// chosen ones plus up to extra more from ranked (the candidates in order of
// weighted room), at AnyNode nil (no class constraint at all).
func Widen(step Step, chosen, ranked []string, extra int) []string {
	switch step {
	case Chosen:
		return chosen
	case MoreClass:
		out := append([]string(nil), chosen...)
		for _, c := range ranked {
			if extra == 0 {
				break
			}
			if !contains(out, c) {
				out = append(out, c)
				extra--
			}
		}
		return out
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
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
