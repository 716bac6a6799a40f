package main

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/exporter"
)

// exporterCommand serves the local cluster's metrics exporter: the host in
// node_exporter's names and each primary cgroup in cAdvisor's, for the
// drivers' external usage source. dev-cluster up starts it.
func exporterCommand() cli.CommandFactory {
	var listen string
	var cgroups repeatedFlag
	return command.Simple{
		Name:     "harvest-dev dev-cluster exporter",
		Synopsis: "Serve the host's and the primary cgroups' metrics (node_exporter and cAdvisor names)",
		Usage:    "harvest-dev dev-cluster exporter -listen 127.0.0.1:9100 -cgroup /path [-cgroup /path ...]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&listen, "listen", "127.0.0.1:9100", "address of /metrics")
			fs.Var(&cgroups, "cgroup", "a primary tenant's cgroup path (repeatable), labelled id=<path>")
		},
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			if len(cgroups) == 0 {
				return errors.New("name at least one -cgroup")
			}
			return exporter.Serve(ctx, listen, cgroups)
		},
	}.Factory()
}

// repeatedFlag collects a flag given several times (-cgroup).
type repeatedFlag []string

func (c *repeatedFlag) String() string     { return strings.Join(*c, ",") }
func (c *repeatedFlag) Set(v string) error { *c = append(*c, v); return nil }
