// Package summary owns what the testbed's runs add up to for a reader:
// summary.md (a row per run beside the simulator's prediction, a row per
// policy over its seeds, where the finished jobs' time went, the real
// primary's latency, the unfinished jobs at the end) and the plots (the
// job-time CDF, the real primary's p99 per minute, the harvested and
// primary share of the cores), from the runs' reports (internal/testbed).
package summary
