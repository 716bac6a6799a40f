package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/placer/maintenance"
	"github.com/harvest-platform/harvest/placer/maintenance/nomadcluster"
)

// Exit codes of `maintenance plan` besides 1 (an error).
const (
	planStartNow    = 0
	planWait        = 3   // -once, and the workload is above the threshold
	planInterrupted = 130 // SIGINT or SIGTERM before it said start now
)

const planName = "harvestctl maintenance plan"

const planHelp = `Usage: harvestctl maintenance plan -urgency N -deadline D [options]

  Choose when to start cluster maintenance by the work it would forfeit.

  It profiles the last -profile-window of Nomad's batch allocations (every
  namespace), every -step: the accumulated work of what runs then (elapsed
  time x allocated CPU in MHz, summed over running tasks: "aw", which
  maintenance would throw away) and the number of running jobs ("cl", the
  naive rule, for comparison). The urgency picks that percentile of the
  chosen rule's profile as the threshold: 1 waits for the quietest 1% of the
  profile, 100 for any moment no busier than the busiest one. It decides
  first on that same read, then reads Nomad's unfinished batch allocations
  every -interval, and says "start now" when the current value falls to or
  below the threshold, or when the deadline (a duration from now such as
  2h, or an RFC3339 time) comes. With -drain it then drains the -node
  nodes (every node by default) with -drain-deadline, leaving them
  ineligible for new work. Nomad garbage-collects finished allocations, so
  the profile covers only the history it still holds.

Exit status: 0 start now (and drained, with -drain); 3 wait (with -once);
1 an error; 130 interrupted by SIGINT or SIGTERM before it said start now.
`

func maintenanceCommands() map[string]cli.CommandFactory {
	return map[string]cli.CommandFactory{
		"maintenance": command.Group("harvestctl maintenance", "Plan cluster maintenance by accumulated work",
			"harvestctl maintenance plan -urgency N -deadline D [options]", "plan"),
		"maintenance plan": func() (cli.Command, error) {
			return &planCommand{out: os.Stdout, errOut: os.Stderr, now: time.Now}, nil
		},
	}
}

type planOptions struct {
	urgency                               int
	deadline, rule, nomadAddr             string
	window, step, interval, drainDeadline time.Duration
	drain, once                           bool
	nodes                                 varFlags
}

func (o *planOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&o.urgency, "urgency", 0, "1 (can wait) to 100 (most urgent): the percentile of the profile taken as the threshold (required)")
	fs.StringVar(&o.deadline, "deadline", "", "start by then whatever runs: a duration from now (2h) or an RFC3339 time (required)")
	fs.StringVar(&o.rule, "rule", "aw", "aw (accumulated work) or cl (running jobs)")
	fs.DurationVar(&o.window, "profile-window", 24*time.Hour, "how far back to profile (\"yesterday\")")
	fs.DurationVar(&o.step, "step", time.Minute, "the profile's sampling step")
	fs.DurationVar(&o.interval, "interval", 10*time.Second, "how often to read the current workload")
	fs.BoolVar(&o.once, "once", false, "decide once and exit: 0 start now, 3 wait")
	fs.BoolVar(&o.drain, "drain", false, "when it says start now, drain the -node nodes and leave them ineligible")
	fs.Var(&o.nodes, "node", "a node to drain, by name or ID (repeatable; default every node)")
	fs.DurationVar(&o.drainDeadline, "drain-deadline", time.Hour, "how long a drained node's allocations get to move before Nomad stops them")
	fs.StringVar(&o.nomadAddr, "nomad-addr", "", "Nomad HTTP API address (default: NOMAD_ADDR, else http://127.0.0.1:4646)")
}

func (o *planOptions) check() error {
	switch {
	case o.urgency == 0:
		return errors.New("-urgency is required: 1 (can wait) to 100 (most urgent)")
	case o.deadline == "":
		return errors.New("-deadline is required: a duration from now such as 2h, or an RFC3339 time")
	case o.window <= 0 || o.step <= 0 || o.interval <= 0 || o.drainDeadline <= 0:
		return errors.New("-profile-window, -step, -interval and -drain-deadline must be positive")
	case o.window/o.step > 1_000_000:
		return fmt.Errorf("-profile-window %s in steps of %s is over a million samples: take a longer -step", o.window, o.step)
	case len(o.nodes) > 0 && !o.drain:
		return errors.New("-node names nodes to drain: add -drain")
	}
	return nil
}

// planRule is a workload metric: what the threshold and the watch compare.
type planRule struct {
	name, what, unit string
	metric           maintenance.Metric
}

var planRules = []planRule{
	{"aw", "accumulated work", "MHz·s", maintenance.AccumulatedWork},
	{"cl", "running jobs", "jobs", maintenance.RunningJobs},
}

type planCommand struct {
	out, errOut io.Writer
	now         func() time.Time
}

var _ cli.Command = (*planCommand)(nil)

func (c *planCommand) Synopsis() string {
	return "Say when to start maintenance (and drain) by accumulated work"
}

func (c *planCommand) Help() string {
	var b strings.Builder
	b.WriteString(planHelp + "\nOptions:\n\n")
	fs := flag.NewFlagSet(planName, flag.ContinueOnError)
	new(planOptions).register(fs)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

func (c *planCommand) Run(args []string) int {
	var o planOptions
	fs := flag.NewFlagSet(planName, flag.ContinueOnError)
	o.register(fs)
	fs.SetOutput(c.errOut)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := c.plan(ctx, &o, fs.Args())
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(c.out, "interrupted: %v\n", err)
		return planInterrupted
	}
	if err != nil {
		fmt.Fprintf(c.errOut, "%s: %v\n", planName, err)
		return 1
	}
	return code
}

func (c *planCommand) plan(ctx context.Context, o *planOptions, args []string) (int, error) {
	if len(args) > 0 {
		return 1, fmt.Errorf("unexpected arguments %q: every input is a flag", args)
	}
	if err := o.check(); err != nil {
		return 1, err
	}
	i := slices.IndexFunc(planRules, func(r planRule) bool { return r.name == o.rule })
	if i < 0 {
		return 1, fmt.Errorf("-rule %q: want aw (accumulated work) or cl (running jobs)", o.rule)
	}
	rule := planRules[i]
	deadline, err := maintenance.ParseDeadline(o.deadline, c.now())
	if err != nil {
		return 1, fmt.Errorf("-%w", err)
	}
	src, err := nomadcluster.Connect(o.nomadAddr)
	if err != nil {
		return 1, err
	}
	var targets []nomadcluster.Node
	if o.drain {
		if targets, err = src.Nodes(ctx, o.nodes); errors.Is(err, nomadcluster.ErrNoSuchNode) {
			return 1, fmt.Errorf("-node %w", err)
		} else if err != nil {
			return 1, err
		}
	}
	runs, err := src.BatchRuns(ctx, "")
	if err != nil {
		return 1, err
	}
	now := c.now()
	p, err := newPlanProfile(runs, now.Add(-o.window), now, o.step, o.urgency)
	if err != nil {
		return 1, err
	}
	p.print(c.out, rule)
	return c.watch(ctx, src, rule, p.threshold[rule.name], deadline, targets, o, runs)
}

// watch decides first on the runs just read for the profile, then every
// interval on those of Nomad's unfinished allocations alone, until it may
// start (with -once it decides once), then drains the targets.
func (c *planCommand) watch(ctx context.Context, src *nomadcluster.Cluster, r planRule, threshold float64,
	deadline time.Time, targets []nomadcluster.Node, o *planOptions, runs []maintenance.Alloc) (int, error) {
	var err error
	for {
		now := c.now()
		var d maintenance.Decision
		switch {
		case err != nil && ctx.Err() != nil:
			return planInterrupted, err
		case err != nil && !now.Before(deadline):
			d = maintenance.Decision{Start: true, Reason: fmt.Sprintf("start now: the deadline %s has come (workload unknown: %v)", deadline.Format(time.RFC3339), err)}
		case err != nil:
			fmt.Fprintf(c.errOut, "%s: %v (trying again in %s)\n", planName, err, o.interval)
		default:
			current := r.metric(runs, now)
			d = maintenance.Decide(current, threshold, now, deadline)
			verdict := "wait"
			if d.Start {
				verdict = "start now"
			}
			fmt.Fprintf(c.out, "%s  %s %.0f %s, threshold %.0f  deadline %s  %s\n", now.UTC().Format(time.RFC3339),
				r.name, current, r.unit, threshold, untilDeadline(now, deadline), verdict)
		}
		if d.Start {
			fmt.Fprintln(c.out, d.Reason)
			return planStartNow, src.DrainAll(ctx, targets, o.drainDeadline, planName+": "+d.Reason, func(n nomadcluster.Node) {
				fmt.Fprintf(c.out, "node %s (%s): draining, its allocations have %s to move before Nomad stops them; ineligible for new work\n",
					n.Name, n.ShortID(), o.drainDeadline)
			})
		}
		if o.once { // the first decision, on the profile's read, which did not fail
			fmt.Fprintf(c.out, "%s (exit %d: run again later, or without -once to watch)\n", d.Reason, planWait)
			return planWait, nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(c.out, "interrupted: maintenance not started, nothing drained")
			return planInterrupted, nil
		case <-time.After(o.interval):
		}
		runs, err = src.BatchRuns(ctx, nomadcluster.LiveAllocs)
	}
}

func untilDeadline(now, deadline time.Time) string {
	if !now.Before(deadline) {
		return "passed"
	}
	return "in " + deadline.Sub(now).Round(time.Second).String()
}
