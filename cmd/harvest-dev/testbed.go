package main

// harvest-dev testbed: the paper's testbed experiment on a local cluster
// (internal/testbed), one run per policy and seed, each on a cluster of
// its own, then a table and the job-time CDF of every run.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/internal/testbed"
	"github.com/harvest-platform/harvest/internal/testbed/summary"
)

func testbedCommand() cli.CommandFactory {
	c := testbed.Default()
	var policies, seeds string
	var planOnly bool
	return command.Simple{
		Name:     "harvest-dev testbed",
		Synopsis: "Replay primary tenants' CPU on a local cluster and run the simulator's job stream under stock, PT and H",
		Usage:    "harvest-dev testbed [-policies h,pt,stock] [-seeds 1,2,3] [-clients 7] [-speedup 12] [-trace-hours 24] [-out DIR]",
		Flags: func(fs *flag.FlagSet) {
			exe, _ := os.Executable()
			fs.StringVar(&policies, "policies", "h,pt,stock", "policies to run, in order: stock (Nomad alone, raw_exec), pt (the driver, no classes), h (everything), none (no job: the baseline of -real-primary)")
			fs.StringVar(&seeds, "seeds", "1", "seeds (the stream and the tenants), comma-separated")
			fs.IntVar(&c.Clients, "clients", c.Clients, fmt.Sprintf("Nomad clients, one primary tenant each (1-%d)", localcluster.MaxClients))
			fs.IntVar(&c.NodeCores, "node-cores", c.NodeCores, "cores of each client to Nomad, the driver and the replay (L247: 12)")
			fs.Float64Var(&c.ReserveCores, "reserve", c.ReserveCores, "cores the driver keeps for the primary (L248: 4)")
			fs.Float64Var(&c.Speedup, "speedup", c.Speedup, "trace seconds per wall second, for the primaries and the stream")
			fs.Float64Var(&c.TraceHours, "trace-hours", c.TraceHours, "trace hours replayed after the history window")
			fs.IntVar(&c.HistoryDays, "history-days", c.HistoryDays, "days of history imported and classified before the span")
			fs.IntVar(&c.Profile, "profile", c.Profile, "synthetic datacenter dc-N whose tenants the clients replay (Section 6: DC-9)")
			fs.StringVar(&c.HistoryFile, "history", "", "long CSV (tenant,timestamp,cpu_percent; .gz too) to replay instead of -profile")
			fs.Float64Var(&c.JobsPerHour, "jobs-per-hour", c.JobsPerHour, "Poisson arrivals per trace hour (L254: mean 300 s)")
			fs.Float64Var(&c.OfferedLoad, "load", c.OfferedLoad, "share of all cores the stream's work fills (sets the job scale; L302: 0.21)")
			fs.Float64Var(&c.JobScale, "job-scale", 0, "task lengths and stage widths x this (0: derived from -load)")
			fs.DurationVar(&c.Setup, "setup", c.Setup, "wall time allowed for the cluster, the import and the labels before the span")
			fs.DurationVar(&c.Drain, "drain", c.Drain, "how long after the span to wait for the jobs still running")
			fs.IntVar(&c.BlobObjects, "blob-objects", c.BlobObjects, "objects written through a harvest-blob front before the span, one read by each task with curl (0: no blob tier)")
			fs.IntVar(&c.BlobObjectKB, "blob-object-kb", c.BlobObjectKB, "size of each of those objects (KiB)")
			fs.BoolVar(&c.BoundedReschedule, "bounded-reschedule", false, "write the proxy's former reschedule block (5 attempts an hour) into every job, to measure the unlimited default against it")
			fs.DurationVar(&c.EscalationDelay, "escalation-delay", 0, "under h (the other policies of the command have no escalation), the placer's escalation delay (0: its default, 30s wall, which the speed-up does not scale; 30s/speedup scales it), to measure the default's weight")
			fs.BoolVar(&c.NoRoomRule, "no-room-rule", false, "run the placer with proxy.room_placement = \"none\" (Nomad places by its own count; the driver refuses what does not fit), to measure the room rule against it")
			fs.BoolVar(&c.RoomDevice, "room-device", false, "run every client with the harvest-room device plugin and the placer with proxy.room_placement = \"device\" (Nomad counts each harvested allocation against the driver's room), to measure it against the attribute rule")
			fs.StringVar(&c.SchedulerAlgorithm, "scheduler-algorithm", "", "Nomad's scheduler algorithm for the runs (binpack or spread; default Nomad's, binpack)")
			fs.BoolVar(&c.RealPrimary, "real-primary", false, "make the first client's primary a real latency-critical service burning its tenant's CPU, pinned to one host CPU with the harvested tasks placed there burning theirs, and report its p99 per minute (Figure 10)")
			fs.IntVar(&c.RealPrimaryCPU, "real-primary-cpu", c.RealPrimaryCPU, "the host CPU the real primary's node stands on")
			fs.BoolVar(&c.RealtimeLoad, "realtime-load", false, "drive the real primary from a process of its own at a real-time priority (SCHED_FIFO) on the other CPUs, where the daemons cannot delay its sending, as the paper's load ran on machines of its own")
			fs.BoolVar(&planOnly, "plan", false, "print what each run would ask of this host (jobs, tasks, allocations a second) and start nothing")
			fs.StringVar(&c.Out, "out", "out/testbed", "folder of the reports and plots")
			fs.StringVar(&c.RunDir, "run-dir", envOr("HARVEST_RUN_DIR", ".run/testbed"), "run folder of the testbed's cluster")
			fs.StringVar(&c.StackBin, "stack-bin", envOr("HARVEST_STACK_BIN", ".cache/stack/bin"), "folder holding nomad, consul and minio")
			fs.StringVar(&c.Bin, "bin", filepath.Dir(exe), "folder holding Harvest's binaries")
		},
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			runs, err := testbedRuns(c, policies, seeds)
			if err != nil {
				return err
			}
			if planOnly {
				for _, r := range runs {
					p, err := testbed.PlanOf(r)
					if err != nil {
						return err
					}
					fmt.Printf("%s seed %d: %s\n", r.Policy, r.Seed, p)
				}
				return nil
			}
			c.Progress = os.Stderr
			c.Logger = hclog.New(&hclog.LoggerOptions{Name: "testbed", Level: hclog.Warn})
			var reports []*testbed.Report
			out := c.Out
			for _, r := range runs {
				r.Progress, r.Logger = c.Progress, c.Logger
				rep, err := testbed.Run(ctx, r)
				if err != nil {
					return fmt.Errorf("%s seed %d: %w", r.Policy, r.Seed, err)
				}
				reports = append(reports, rep)
				// After every run, so hours of runs cut short still
				// leave the summary of those that ended.
				if err := writeTestbedSummary(out, reports); err != nil {
					return err
				}
			}
			table, err := os.ReadFile(filepath.Join(out, "summary.md"))
			fmt.Print(string(table))
			return err
		},
	}.Factory()
}

// writeTestbedSummary writes summary.md, the plots and reports.json of the
// runs so far into out.
func writeTestbedSummary(out string, reports []*testbed.Report) error {
	if err := summary.Write(out, reports); err != nil {
		return err
	}
	data, err := json.MarshalIndent(reports, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "reports.json"), append(data, '\n'), 0o644)
}

// testbedRuns is one configuration per policy and seed, each writing into
// out/<policy>-<seed>.
func testbedRuns(c testbed.Config, policies, seeds string) ([]testbed.Config, error) {
	var out []testbed.Config
	for _, s := range strings.Split(seeds, ",") {
		seed, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("-seeds %q: %w", seeds, err)
		}
		for _, p := range strings.Split(policies, ",") {
			policy, err := testbed.ParsePolicy(strings.TrimSpace(p))
			if err != nil {
				return nil, err
			}
			r := c
			r.Policy, r.Seed = policy, seed
			if policy != testbed.H {
				r.EscalationDelay = 0 // only h escalates: -policies none,pt,h -escalation-delay D sets it for h
			}
			r.Out = filepath.Join(c.Out, fmt.Sprintf("%s-%d", policy, seed))
			if err := r.Validate(); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}
