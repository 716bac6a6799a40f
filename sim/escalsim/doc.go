// Package escalsim owns the simulator's model of placement escalation and
// greylisting on a harvested cluster (placement-escalation.txt): nodes in
// classes, a few slots each; every job comes with Algorithm 1's ranking of
// the classes, skewed so that the favourite classes fill up, and is chosen
// to the first of them; some flaky nodes fail tasks (node faults), and the
// primary tenants evict tasks now and then (not the node's fault). A failed
// or evicted task is retried. Policies, each against the baseline it
// replaces: strict classes (a job waits until its classes have room) or
// escalation (placer/escalation's Escalate with a delay, Widen to more
// classes and then any node); no greylisting or greylisting with
// placer/escalation's Tracker (a node at the threshold of node faults gets
// no new tasks until the counters reset). It calls the very code the placer
// runs and is pure and deterministic for a seed.
package escalsim
