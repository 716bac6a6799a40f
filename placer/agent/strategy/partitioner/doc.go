// Package partitioner owns the placer's short-job partition strategy (the
// partition block, hybrid-scheduling.txt): the cutoff between short and
// long jobs follows finished harvested runs' durations (the stage
// sequencer tells it, Observe), the partition's size follows the cutoff,
// and each pass labels the partition's nodes in their meta; the proxy asks
// it for the cutoff, and it serves its state (GET /v1/partition) and keeps
// it in Consul KV (Document) across restarts. The rule itself is
// placer/partition's. Its files are every placement strategy's: doc.go,
// strategy.go, metrics.go and strategy_test.go.
package partitioner
