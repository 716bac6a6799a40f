// Package greylister owns the placer's greylisting strategy (the greylist
// block, placement-escalation.txt, "Node reliability tracking"): each pass
// counts the failures of harvested allocations per node, leaving out
// evictions by the harvest driver's reserve, preemptions and the task's
// own memory limit, marks a node at the threshold greylisted in its meta
// (the proxy's rule keeps harvested jobs off it) until the counters reset,
// and serves the counts (GET /v1/greylist). The tracker itself is
// placer/greylist's. Its files are every placement strategy's: doc.go,
// strategy.go, metrics.go and strategy_test.go.
package greylister
