package proxy

import (
	"fmt"
	"time"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/packing"
)

// Node meta the placer's placement strategies write (issue 8) and the job rules that
// read it. A rule on a key no node carries matches every node (Nomad's
// "!=" passes on a missing attribute), so a strategy that is on but has not
// labelled any node yet changes nothing.
const (
	PackTierKey    = contract.NodePackTier       // node: high, medium or low (container packing)
	EmptySinceKey  = contract.NodeEmptySince     // node: RFC 3339 time it last became empty of harvested work
	PartitionKey   = contract.NodePartition      // node: "short" on the short-job partition
	PartitionShort = contract.PartitionShort     // the value of PartitionKey on the partition
	GreylistKey    = contract.NodeGreylisted     // node: "true" while its failure count is over the threshold
	GreylistedTrue = contract.GreylistedTrue     // the value of GreylistKey on a greylisted node
	ExpectedKey    = contract.JobExpected        // job (user): expected duration when there is no history, e.g. "40s"
	PartitionWhy   = contract.JobPartitionReason // job: why the job may or may not use the short partition
	EscalationKey  = contract.JobEscalation      // job: the escalation step its placement is at
	BlockedSince   = contract.JobBlockedSince    // job: when its placement first blocked (RFC 3339)
	EscalateAfter  = contract.JobEscalateAfter   // job (user): its own escalation delay, e.g. "10s"
)

// Strategies are the optional placement strategies the rewrite applies besides
// Algorithm 1's classes.
type Strategies struct {
	// Packing steers harvested work medium-first, then low, then high
	// through affinities on PackTierKey (packing.AffinityWeight). With an
	// affinity Nomad also scores up to 100 nodes instead of the two a batch
	// job otherwise samples, so the preference reaches every node.
	Packing bool
	// Greylist keeps harvested jobs off greylisted nodes.
	Greylist bool
	// Partition, when set, keeps jobs that are not known to be short off
	// the short-job partition; its cutoff moves (placer/partition).
	Partition interface{ Cutoff() time.Duration }
}

// attr is a node meta key as a constraint target.
func attr(key string) string { return "${meta." + key + "}" }

// applyStrategies adds the strategies' rules to the job tree that apply has
// already rewritten (so its meta exists).
func (p Strategies) applyStrategies(job map[string]any, d *Decision) {
	meta := job["Meta"].(map[string]any)
	expected, known := d.Expected, d.Known
	if p.Greylist {
		addRule(job, "Constraints", map[string]any{"LTarget": attr(GreylistKey), "RTarget": GreylistedTrue, "Operand": "!="})
	}
	if p.Packing {
		for _, t := range []packing.Tier{packing.Medium, packing.Low, packing.High} {
			addRule(job, "Affinities", map[string]any{"LTarget": attr(PackTierKey), "RTarget": string(t), "Operand": "=",
				"Weight": packing.AffinityWeight(t)})
		}
	}
	if p.Partition != nil {
		cutoff := p.Partition.Cutoff()
		switch {
		case !known:
			meta[PartitionWhy] = fmt.Sprintf("general: no run of this job on record and no meta %s; short jobs (cutoff %s) may use the short partition", ExpectedKey, cutoff)
		case expected <= cutoff:
			meta[PartitionWhy] = fmt.Sprintf("short: expected %s <= cutoff %s; may use the short partition", expected.Round(time.Second), cutoff)
			return
		default:
			meta[PartitionWhy] = fmt.Sprintf("long: expected %s > cutoff %s; kept off the short partition", expected.Round(time.Second), cutoff)
		}
		addRule(job, "Constraints", map[string]any{"LTarget": attr(PartitionKey), "RTarget": PartitionShort, "Operand": "!="})
	}
}

func addRule(job map[string]any, field string, rule map[string]any) {
	rules, _ := job[field].([]any)
	job[field] = append(rules, rule)
}

// expectedDuration is how long the job is expected to run: its last run,
// or else what its meta says.
func expectedDuration(job map[string]any, last time.Duration, known bool) (time.Duration, bool, error) {
	if known {
		return last, true, nil
	}
	meta, _ := job["Meta"].(map[string]any)
	v := str(meta[ExpectedKey], "")
	if v == "" {
		return 0, false, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, false, &BadJobError{fmt.Errorf("meta %s = %q: want a positive duration such as \"40s\"", ExpectedKey, v)}
	}
	return d, true, nil
}
