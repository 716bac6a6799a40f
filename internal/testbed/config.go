package testbed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/driver/harvestcg"
)

// Policy is what harvests the testbed's servers.
type Policy string

const (
	// Stock is Nomad alone: tasks under raw_exec on nodes Nomad sees as
	// NodeCores each, whatever their primary uses; no reserve, no eviction
	// (the placer only sequences the DAGs' stages).
	Stock Policy = "stock"
	// PT is the harvest driver (reserve, refused starts, youngest-first
	// eviction) without classes: the proxy writes no class rule.
	PT Policy = "pt"
	// H is everything: the driver and Algorithm 1's classes.
	H Policy = "h"
	// None harvests nothing: the cluster, its primaries and the blob tier
	// run through the span and no job is submitted, the baseline of Figure
	// 10 ("no harvesting") for a run with a real primary.
	None Policy = "none"
)

// ParsePolicy reads stock, pt, h or none.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Stock, PT, H, None:
		return p, nil
	}
	return "", fmt.Errorf("policy %q: want stock, pt, h or none", s)
}

// Config is one testbed run.
type Config struct {
	Policy Policy
	Seed   uint64
	// Clients is the number of Nomad clients, one primary tenant each.
	Clients int
	// NodeCores and ReserveCores size each client as the paper's servers:
	// "each server has 12 cores" (L247), "We reserve 4 cores (33%)" (L248).
	NodeCores    int
	ReserveCores float64
	// Speedup: one wall second is Speedup trace seconds, for the primaries'
	// replay and the job stream alike (a 2-minute slot lasts 120/Speedup s).
	Speedup float64
	// TraceHours is the span replayed after HistoryDays of history, which
	// the placer classifies before the span starts.
	TraceHours  float64
	HistoryDays int
	// Profile is the synthetic datacenter (dc-0..dc-9) whose first Clients
	// tenants the clients replay, unless HistoryFile (a long CSV) is set.
	Profile     int
	HistoryFile string
	// JobsPerHour (trace time) and OfferedLoad (share of all cores) set the
	// stream and its job scale as the simulator does; JobScale, when set,
	// wins over the derived scale.
	JobsPerHour float64
	OfferedLoad float64
	JobScale    float64
	// BoundedReschedule writes the proxy's former default reschedule
	// block into every job (5 attempts an hour, 5 s apart; the user's block
	// wins over the proxy's), to measure what the unlimited default changed.
	BoundedReschedule bool
	// NoRoomRule runs the placer with proxy.room_placement = "none": no
	// group is constrained to the driver's published room, as before the
	// rule existed, to measure what the rule changed (refused starts).
	NoRoomRule bool
	// RoomDevice runs every client with the harvest-room device plugin and
	// the placer with proxy.room_placement = "device": Nomad's scheduler
	// counts each harvested allocation against the driver's room, to
	// measure it against the attribute rule (refused starts).
	RoomDevice bool
	// EscalationDelay, when set, is the escalation block's delay under H
	// (zero: the placer's default, 30 s wall). The default is not scaled by
	// the speed-up, so at S it weighs S times more in trace time than in
	// production; 30s/S scales it, a named deviation to measure that weight.
	EscalationDelay time.Duration
	// SchedulerAlgorithm, when set, is Nomad's scheduler algorithm for
	// the run ("binpack" or "spread"), set as an operator would with
	// `nomad operator scheduler set-config -scheduler-algorithm`; "" keeps
	// Nomad's default (binpack). RM-H schedules a container "to a
	// heartbeating server of the correct class with a probability
	// proportional to the server's available resources" (L219), nearer to
	// spread than to binpack, which fills the fullest node first.
	SchedulerAlgorithm string
	// BlobObjects of BlobObjectKB each are written through a harvest-blob
	// front over the clients' MinIO servers before the span; every task
	// reads one through the S3 API with curl, and the run reads them all
	// back at the end. Zero starts no front.
	BlobObjects  int
	BlobObjectKB int
	// RealPrimary makes the first client's primary a real latency-critical
	// service pinned to the host's CPU RealPrimaryCPU, its load following
	// its tenant, with the harvested tasks on that client burning their
	// share of the same CPU (realprimary.go), for Figure 10.
	RealPrimary    bool
	RealPrimaryCPU int
	// RealtimeLoad drives the real primary from a process of its own at a
	// real-time priority (standin.RealtimeLoad) on every CPU but
	// RealPrimaryCPU, where the daemons cannot delay its sending; without
	// it the testbed's own process drives it, beside the daemons, and a
	// busy control plane makes the load late (docs/testbed.md, "Where the
	// real primary's tail comes from"). The paper's load ran on machines of
	// its own.
	RealtimeLoad bool
	// Drain is how long (wall) the run waits after the span for the jobs
	// still running; what is left is counted unfinished.
	Drain time.Duration
	// Setup is how long (wall) the run allows for the cluster, the history
	// import and the labels before the span starts; the primaries hold the
	// span's first slot until then.
	Setup time.Duration

	// Out receives report.json, the plots and the job files.
	Out string
	// RunDir is the cluster's run folder; Bin holds Harvest's binaries and
	// StackBin Nomad's, Consul's and MinIO's.
	RunDir, Bin, StackBin string
	// Progress receives a line now and then.
	Progress io.Writer
	Logger   hclog.Logger
}

// Default is the paper's testbed where this machine allows: 7 clients of
// 12 cores with 4 reserved (L247-248), DC-9's tenants (Section 6 replays 21
// DC-9 tenants), Poisson arrivals of mean 300 s (L254) carrying 21% of all
// cores (L302), 24 trace hours at a speed-up of 12 (two hours' wall).
func Default() Config {
	return Config{
		Policy: H, Seed: 1, Clients: 7, NodeCores: 12, ReserveCores: 4, Speedup: 12,
		TraceHours: 24, HistoryDays: 14, Profile: 9, JobsPerHour: 12, OfferedLoad: 0.21,
		BlobObjects: 32, BlobObjectKB: 256, Drain: 10 * time.Minute, Setup: 3 * time.Minute,
		RealPrimaryCPU: hostCPUs() - 1,
	}
}

// Validate says what is wrong with c.
func (c Config) Validate() error {
	var errs []error
	if c.Clients < 1 {
		errs = append(errs, fmt.Errorf("clients %d: want at least 1", c.Clients))
	}
	if c.NodeCores < 1 || c.ReserveCores < 0 || c.ReserveCores >= float64(c.NodeCores) {
		errs = append(errs, fmt.Errorf("node cores %d, reserve %g: want a reserve below the cores", c.NodeCores, c.ReserveCores))
	}
	if c.Setup <= 0 || c.Drain < 0 {
		errs = append(errs, fmt.Errorf("setup %s, drain %s: want a positive setup", c.Setup, c.Drain))
	}
	if c.Speedup <= 0 || c.TraceHours <= 0 || c.HistoryDays < 1 {
		errs = append(errs, fmt.Errorf("speedup %g, trace hours %g, history days %d: want positive values", c.Speedup, c.TraceHours, c.HistoryDays))
	}
	if c.Profile < 0 || c.Profile > 9 {
		errs = append(errs, fmt.Errorf("profile dc-%d: want dc-0..dc-9", c.Profile))
	}
	if c.JobsPerHour < 0 || c.OfferedLoad < 0 || c.JobScale < 0 || c.JobsPerHour == 0 && c.OfferedLoad == 0 {
		errs = append(errs, errors.New("jobs per hour and offered load: want at least one positive, none negative"))
	}
	if c.BlobObjects < 0 || c.BlobObjects > 0 && c.BlobObjectKB < 1 {
		errs = append(errs, fmt.Errorf("blob objects %d of %d KiB: want none, or some of at least 1 KiB", c.BlobObjects, c.BlobObjectKB))
	}
	if c.Out == "" || c.RunDir == "" || c.Bin == "" || c.StackBin == "" {
		errs = append(errs, errors.New("out, run dir, bin and stack bin are required"))
	}
	if c.RoomDevice && c.NoRoomRule {
		errs = append(errs, errors.New("room device and no room rule: want one or the other"))
	}
	if c.EscalationDelay < 0 || c.EscalationDelay > 0 && c.Policy != H {
		errs = append(errs, fmt.Errorf("escalation delay %s: want none, or a positive delay under h (the only policy that escalates)", c.EscalationDelay))
	}
	if c.SchedulerAlgorithm != "" && c.SchedulerAlgorithm != "binpack" && c.SchedulerAlgorithm != "spread" {
		errs = append(errs, fmt.Errorf("scheduler algorithm %q: want binpack or spread", c.SchedulerAlgorithm))
	}
	if c.RealPrimary && (c.RealPrimaryCPU < 0 || c.RealPrimaryCPU >= hostCPUs()) {
		errs = append(errs, fmt.Errorf("real primary's CPU %d: this host has CPUs 0-%d", c.RealPrimaryCPU, hostCPUs()-1))
	}
	if c.RealtimeLoad && (!c.RealPrimary || hostCPUs() < 2) {
		errs = append(errs, errors.New("a real-time load needs the real primary and a host CPU besides its own"))
	}
	if _, err := ParsePolicy(string(c.Policy)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// wall is how long d of trace time lasts on the testbed.
func (c Config) wall(traceSeconds float64) time.Duration {
	return time.Duration(traceSeconds / c.Speedup * float64(time.Second))
}

// loadCPUs is taskset's list of every host CPU but the real primary's.
func (c Config) loadCPUs() string {
	var cpus []int
	for cpu := range hostCPUs() {
		if cpu != c.RealPrimaryCPU {
			cpus = append(cpus, cpu)
		}
	}
	return harvestcg.FormatCPUList(cpus)
}

// hostCPUs is how many CPUs the host has online, whatever this process's
// affinity (the testbed may run under taskset -c 0, keeping its daemons off
// the real primary's CPU, where runtime.NumCPU says 1).
func hostCPUs() int {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	cpus, err := harvestcg.ParseCPUList(string(data))
	if err != nil || len(cpus) == 0 {
		return runtime.NumCPU()
	}
	return len(cpus)
}
