// Package hybridsim owns the simulator's model of hybrid datacenter
// scheduling with a short-job partition (hybrid-scheduling.txt, Section 4,
// the Hawk model, with Sections 5.4-5.5's moving cutoff and partition): N
// nodes, each with one FIFO task queue; a job is short or long by its mean
// task duration against the cutoff; long jobs are placed centrally, each
// task on the general partition's queue with the least long work (the
// central scheduler knows only long jobs, Section 4.7); short jobs are
// placed Sparrow-style, 2 random probes per task across the whole cluster,
// each task on one of the least-loaded probed nodes (batch sampling with
// late binding, Section 4.5; nodes advertise their queued work, Section
// 4.8); an idle node steals the short tasks queued behind a long one on a
// few random nodes (Section 4.6). With the partition, long jobs may not use
// the partition's nodes, and the partition's size and the cutoff move as
// placer/partition's State says, observing every finished job's mean task
// duration: the very code the placer runs. Without it (the baseline) long
// and short jobs alike may use any node under the same rules.
//
// Workloads: a Sparrow-like synthetic mix (90% short jobs of many 50 s
// tasks, 10% long jobs of 10000 s tasks, Poisson arrivals) and job shapes
// from a real trace (schedsim.ParseSWIM), both with arrivals set by an
// offered load. Everything is pure and deterministic for a seed.
package hybridsim
