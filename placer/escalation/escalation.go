// Package escalation is placement escalation from placement-escalation.txt
// (its companion, node greylisting, is placer/greylist): a job that stays
// blocked on its classes longer than a delay is relaxed step by step: more
// classes, then any harvested node. Pure: the placer applies it through the
// job's constraints.
package escalation

import "time"

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
