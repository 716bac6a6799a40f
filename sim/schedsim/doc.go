// Package schedsim simulates a month of harvested batch scheduling on
// servers whose primary tenants' utilisation comes from their history, as
// the paper's simulator does (history-based-harvesting.txt, Section 6,
// "Simulator", Figures 13-14): DAG jobs arrive as a Poisson process, their
// stages' tasks run in one-core containers on spare cores, and the primary
// tenant's 2-minute utilisation decides evictions. It calls the code the
// platform runs: the driver's rounding and youngest-first eviction
// (driver/guard), the placer's classification (placer/classify), per-server
// room (classify.ServerRoom), Algorithm 1 (placer/selectclass), job typing
// (placer/jobtype) and survival figures (placer/survival).
//
// Policies:
//
//	stock  ignores the primary tenant (containers fill every core; nothing
//	       evicts them; the server-slots they sit in the reserve are counted)
//	pt     primary-aware, no history: the paper's YARN-PT (the rounded primary
//	       and the reserve bound what a server takes; youngest-first kills)
//	h      pt plus the placer: each job's type from its length, its widest
//	       stage as its request, Algorithm 1 over every class's room; the
//	       chosen classes label the job (a constraint); a job no class can
//	       take runs at once unlabelled (line 16 and L220)
//
// The cluster model follows the paper where it speaks, and says so where it
// does not (PaperPreset lists every value with its source line; harvest-sim
// sched -explain prints them): a container goes to a server with
// probability proportional to its free cores (RM-H, L219; Fenwick trees keep
// this a logarithm per draw); jobs with work waiting are served in arrival
// order, keeping their place when a stage starts or a task is killed; a
// finished container runs its job's next ready task and is released after
// IdleRelease without one (Tez container reuse). Each deviation is a Config
// field, so its effect can be measured on its own.
//
// Job time counts queueing. A run reports the mean over the jobs that
// finished and a censored mean that counts the unfinished ones at their age
// when the span ends, and flags a run whose queue grew without bound
// (Saturated). Points, Gains and Summarise turn the runs of a sweep into
// the paper's figures: mean, min and max over seeds per operating point,
// H's reduction against PT per point, and per source the average, min and
// max over the stable points (Figure 14). Only finished jobs' times are
// kept, so a month of 10,000 servers fits in about a GiB.
package schedsim
