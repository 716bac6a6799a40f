// Package guard owns the primary-tenant reserve arithmetic of the harvest
// driver, following history-based-harvesting.txt, Section 5 ("primary tenant
// awareness"): the primary tenant's use is the host's use minus what the
// harvested tasks use, rounded up to whole cores and whole MiB; whenever
// capacity - primary - harvested allocations falls below the reserve, the
// harvested tasks are killed youngest first until the reserve is restored,
// and no more than that.
//
// Hysteresis, so that a noisy primary does not cause a storm of evictions
// and re-admissions: eviction reacts to the current (rounded) primary, but
// admission of a new task looks at the peak primary over the last
// AdmitWindow (default 30 s) and asks for AdmitMargin (default 1 core,
// 256 MiB) on top of the reserve. A spike therefore evicts once, and the
// freed room is not handed to a new task until the primary has stayed low
// for the whole window. Spike (spike.go) is the rule by which the driver
// ticks the guard early between its ticks. It is pure and clock-free:
// callers pass the time.
package guard
