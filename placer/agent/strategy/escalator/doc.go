// Package escalator owns the placer's placement escalation strategy (the
// escalation block, placement-escalation.txt, "Placement Escalation"):
// each pass finds the harvested jobs the placer admitted that stay blocked
// with nothing placed on their chosen classes and, one step per delay,
// re-registers them with more classes by weighted room (the class room,
// placer/agent/classroom), then with no class rule at all. The steps
// themselves are placer/escalation's. Its files are every placement
// strategy's: doc.go, strategy.go, metrics.go and strategy_test.go.
package escalator
