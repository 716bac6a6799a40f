// Package declarations owns what operators declare to the placer, kept in
// Consul KV: one declaration per primary tenant (storage and the CPU and
// memory reserve of its nodes; declarations.go) and the policy document
// (classifier thresholds, Algorithm 1's weights, reserve defaults, blob
// replicas and diversity; policydoc.go), their API routes (GET /v1/tenants,
// GET, PUT, DELETE /v1/tenants/{environment}/{function} and /v1/policy,
// bodies bounded by declcheck.go) and where they take effect (declsync.go):
// the weights swapped live, the thresholds each refresh reads, and the
// declared values published as node meta on harvested nodes. The shapes,
// checks and readers are history/declare's (shared with the driver and the
// blob front); the placer's runtime (placer/agent) serves the routes and
// runs the sync every Interval.
package declarations
