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
//	h      pt plus classes and Algorithm 1: a job only runs in the classes picked for it
package schedsim
