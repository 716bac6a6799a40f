package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/exporter"
	"github.com/harvest-platform/harvest/internal/replay"
)

// exporterCommand serves the local cluster's metrics exporter: the host in
// node_exporter's names and each primary cgroup in cAdvisor's, for the
// drivers' external usage source. dev-cluster up starts it. With -replay,
// the primary cgroups' series come from a CPU trace instead (replayFlags).
func exporterCommand() cli.CommandFactory {
	var listen string
	var cgroups repeatedFlag
	var rf replayFlags
	return command.Simple{
		Name:     "harvest-dev dev-cluster exporter",
		Synopsis: "Serve the host's and the primary cgroups' metrics (node_exporter and cAdvisor names)",
		Usage: "harvest-dev dev-cluster exporter -listen 127.0.0.1:9100 -cgroup /path [-cgroup /path ...]\n" +
			"       harvest-dev dev-cluster exporter -listen 127.0.0.1:9100 -replay trace.csv.gz -replay-start 2026-11-01T00:00:00Z\n" +
			"           [-replay-began RFC3339] [-speedup 1] -node-cores 12 -tenant /path=env/function [-tenant ...]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&listen, "listen", "127.0.0.1:9100", "address of /metrics")
			fs.Var(&cgroups, "cgroup", "a primary tenant's cgroup path (repeatable), labelled id=<path>")
			rf.register(fs)
		},
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			rep, err := rf.replay(time.Now())
			if err != nil {
				return err
			}
			if rep == nil && len(cgroups) == 0 {
				return errors.New("name at least one -cgroup (or -replay a trace)")
			}
			return exporter.Serve(ctx, listen, cgroups, rep)
		},
	}.Factory()
}

// replayFlags are the exporter's replay mode: each -tenant's cgroup is
// served as its tenant in the trace, on a node of -node-cores.
type replayFlags struct {
	file, start, began string
	speedup, nodeCores float64
	tenants            repeatedFlag
}

func (f *replayFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "replay", "", "replay the primary tenants' CPU from this trace (long CSV tenant,timestamp,cpu_percent, optionally gzipped)")
	fs.StringVar(&f.start, "replay-start", "", "trace time (RFC 3339) the replay begins at (with -replay)")
	fs.StringVar(&f.began, "replay-began", "", "wall time (RFC 3339) the replay began at (default: now)")
	fs.Float64Var(&f.speedup, "speedup", 1, "trace seconds per wall second")
	fs.Float64Var(&f.nodeCores, "node-cores", 0, "cores of each replayed node: cpu_percent 100 is this many cores")
	fs.Var(&f.tenants, "tenant", "CGROUP=TENANT (repeatable): serve this cgroup, labelled id=CGROUP, as TENANT (environment/function) in the trace")
}

// replay builds the replay the flags ask for (nil without -replay); now is
// the default start of the replay in wall time.
func (f *replayFlags) replay(now time.Time) (*exporter.Replay, error) {
	if f.file == "" {
		if len(f.tenants) > 0 || f.start != "" || f.began != "" {
			return nil, errors.New("-tenant, -replay-start and -replay-began go with -replay")
		}
		return nil, nil
	}
	start, err := time.Parse(time.RFC3339, f.start)
	if err != nil {
		return nil, fmt.Errorf("-replay-start %q: want an RFC 3339 time", f.start)
	}
	began := now
	if f.began != "" {
		if began, err = time.Parse(time.RFC3339, f.began); err != nil {
			return nil, fmt.Errorf("-replay-began %q: want an RFC 3339 time", f.began)
		}
	}
	if f.speedup <= 0 {
		return nil, fmt.Errorf("-speedup %v: want a positive number", f.speedup)
	}
	if f.nodeCores <= 0 {
		return nil, errors.New("-replay needs -node-cores (a positive number)")
	}
	tenants := map[string]string{}
	for _, t := range f.tenants {
		i := strings.LastIndex(t, "=")
		if i <= 0 || i == len(t)-1 {
			return nil, fmt.Errorf("-tenant %q: want CGROUP=TENANT", t)
		}
		if _, dup := tenants[t[:i]]; dup {
			return nil, fmt.Errorf("-tenant: cgroup %s given twice", t[:i])
		}
		tenants[t[:i]] = t[i+1:]
	}
	if len(tenants) == 0 {
		return nil, errors.New("-replay needs at least one -tenant CGROUP=TENANT")
	}
	trace, err := replay.Load(f.file)
	if err != nil {
		return nil, err
	}
	trace.Start, trace.Began, trace.Speedup = start, began, f.speedup
	return &exporter.Replay{Trace: trace, NodeCores: f.nodeCores, Tenants: tenants}, nil
}

// repeatedFlag collects a flag given several times (-cgroup).
type repeatedFlag []string

func (c *repeatedFlag) String() string     { return strings.Join(*c, ",") }
func (c *repeatedFlag) Set(v string) error { *c = append(*c, v); return nil }
