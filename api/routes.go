package api

// The paths of the placer's HTTP API, written once: the placer serves them
// (placer/agent, with placer/agent/declarations and placer/agent/ingest)
// and this package's methods call them.
const (
	PathHealth         = "/v1/health"          // GET: liveness
	PathClasses        = "/v1/classes"         // GET: the class table
	PathRefreshClasses = "/v1/classes/refresh" // POST: classify and label now
	PathHistorySamples = "/v1/history/samples" // POST: ingest per-node samples of a tenant
	PathTenants        = "/v1/tenants"         // GET: every declaration; /{environment}/{function}: one
	PathPolicy         = "/v1/policy"          // GET, PUT, DELETE: the policy document
	PathPacking        = "/v1/packing"         // GET: packing tiers and releasable nodes
	PathPartition      = "/v1/partition"       // GET: the short-job partition and its cutoff
	PathGreylist       = "/v1/greylist"        // GET: failure counts and greylisted nodes
	PathMetrics        = "/v1/metrics"         // GET: Prometheus metrics
)
