// Package packer owns the placer's packing strategy (the packing block,
// container-packing.txt): each pass gives every ready harvested node its
// packing tier and the time it became empty in its meta, for the proxy's
// tier affinities to steer new harvested work to, and reports the nodes
// empty long enough to scale in or release (GET /v1/packing). The rule
// itself is placer/packing's; the nodes and allocations come from the
// shared cluster view. Like every placement strategy under
// placer/agent/strategy it has the same files: doc.go, strategy.go (New,
// Pass and what it serves), metrics.go (NewMetrics) and strategy_test.go.
package packer
