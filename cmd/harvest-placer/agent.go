package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/placer/agent"
	"github.com/harvest-platform/harvest/placer/config"
)

type agentCommand struct{}

var _ cli.Command = (*agentCommand)(nil)

func (c *agentCommand) Synopsis() string { return "Run the placer daemon" }

func (c *agentCommand) Help() string {
	var b strings.Builder
	b.WriteString(`Usage: harvest-placer agent [options]

  Runs the placer: classifies primary tenants from their history in Consul KV
  on a schedule and on demand, labels Nomad nodes with harvest_class and
  harvest_pattern, and serves its HTTP API and Prometheus metrics. Settings
  come from an HCL file (-config) and flags, flags winning.

Options:

`)
	fs, _ := c.flags(new(config.Config), new(string))
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

func (c *agentCommand) flags(cfg *config.Config, configPath *string) (*flag.FlagSet, func()) {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.StringVar(configPath, "config", "", "HCL configuration file")
	var over config.Config
	fs.StringVar(&over.HTTPAddr, "http-addr", "", "address of the HTTP API (default 127.0.0.1:4650)")
	fs.StringVar(&over.Nomad.Address, "nomad-addr", "", "Nomad HTTP API address (default: the config's, else NOMAD_ADDR, else http://127.0.0.1:4646)")
	fs.StringVar(&over.Consul.Address, "consul-addr", "", "Consul HTTP API address (default: the config's, else CONSUL_HTTP_ADDR, else localhost:8500)")
	fs.StringVar(&over.Consul.Prefix, "consul-prefix", "", "Consul KV prefix of Harvest's state (default harvest/)")
	fs.StringVar(&over.LogLevel, "log-level", "", "log level: TRACE, DEBUG, INFO, WARN, ERROR")
	fs.StringVar(&over.Classify.Interval, "refresh-interval", "", "how often to reclassify (default 24h)")
	fs.StringVar(&over.Proxy.Address, "proxy-addr", "", "address of the admission proxy users point NOMAD_ADDR at (default 127.0.0.1:4656)")
	apply := func() { *cfg = cfg.Merge(over) } // the flags given, over the file
	return fs, apply
}

func (c *agentCommand) Run(args []string) int {
	var configPath string
	cfg := config.Default()
	fs, applyFlags := c.flags(&cfg, &configPath)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if configPath != "" {
		loaded, err := config.Load(configPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "harvest-placer: %v\n", err)
			return 1
		}
		cfg = loaded
	}
	applyFlags()
	log := hclog.New(&hclog.LoggerOptions{Name: "placer", Level: hclog.LevelFromString(cfg.LogLevel)})
	a, err := agent.New(cfg, log)
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := a.Run(ctx); err != nil {
		log.Error("placer stopped", "error", err)
		return 1
	}
	return 0
}
