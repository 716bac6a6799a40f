// Package schedsim simulates a month of harvested batch scheduling on
// servers whose primary tenants' utilisation comes from their history
// (history-based-harvesting.txt, Section 6, "Simulator", Figures 13-14):
// DAG jobs arrive as a Poisson process, their stages' tasks run on spare
// cores, and the primary tenant's 2-minute utilisation decides evictions.
// It calls the very code the platform runs: the driver's reserve arithmetic
// and youngest-first eviction (driver/guard), the placer's classification
// (placer/classify), headroom and class selection (placer/selectclass,
// Algorithm 1) and job typing (placer/jobtype). Policies:
//
//	stock  ignores the primary tenant (tasks fill every core; nothing evicts them)
//	pt     primary-aware, no history: the paper's YARN-PT (reserve + eviction)
//	h      pt plus the placer: job types (thresholds split from the workload,
//	       Section 4.1), Algorithm 1's classes as a preference (or, with
//	       ClassConstraint, a constraint), jobs that fit nowhere held until they
//	       fit (line 16), servers ranked by the room their class's history leaves
//	       for the job's type (classify.Headroom per server)
//
// Job shapes come from a TPC-DS-like mix or from real traces (SWIM, Alibaba
// 2017). Only finished jobs' times are kept, so a month of 10,000 servers
// fits in about a GiB.
package schedsim
