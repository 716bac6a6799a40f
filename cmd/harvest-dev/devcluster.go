package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/localcluster"
)

// devClusterFlags are the settings every dev-cluster subcommand shares.
type devClusterFlags struct {
	runDir, stackBin, driver, usagePlugin string
	clients                               int
	secure, bare                          bool
}

func (f *devClusterFlags) register(fs *flag.FlagSet) {
	exe, _ := os.Executable()
	fs.StringVar(&f.runDir, "run-dir", envOr("HARVEST_RUN_DIR", ".run/cluster"), "run folder of the cluster (configs, data, logs, pids)")
	fs.StringVar(&f.stackBin, "stack-bin", envOr("HARVEST_STACK_BIN", ".cache/stack/bin"), "folder holding the nomad, consul and minio binaries")
	fs.StringVar(&f.driver, "driver", filepath.Join(filepath.Dir(exe), "harvest-driver"), "harvest-driver plugin binary to install in each client's plugin_dir")
	fs.StringVar(&f.usagePlugin, "usage-plugin", filepath.Join(filepath.Dir(exe), "harvest-usage-prometheus"),
		"external usage-source plugin the drivers read the primary tenant through, from the cluster's metrics exporter (\"\": the driver's cgroup source alone)")
	fs.IntVar(&f.clients, "clients", 3, fmt.Sprintf("number of Nomad clients, each with its own Consul agent and MinIO server (3-%d)", localcluster.MaxClients))
	fs.BoolVar(&f.bare, "bare", false, "agents only (Consul, Nomad, the harvest driver in plugin_dir): no MinIO servers, no metrics exporter, as a cluster is before docs/install.md")
	fs.BoolVar(&f.secure, "secure", false, "TLS on every agent and Consul and Nomad ACLs in default-deny (env.sh exports the CA and management tokens)")
}

// selfPath is this binary (the exporter runs as its dev-cluster exporter
// command).
func selfPath() string {
	exe, _ := os.Executable()
	return exe
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

type devClusterCommand struct {
	verb  string
	out   io.Writer
	flags devClusterFlags
}

var _ cli.Command = (*devClusterCommand)(nil)

var devClusterSynopses = map[string]string{
	"up":     "Start a local cluster of real Consul, Nomad and MinIO processes",
	"down":   "Stop the local cluster and remove everything it started",
	"status": "Show where each part of the local cluster is and whether it runs",
	"env":    "Print shell exports (NOMAD_ADDR, CONSUL_HTTP_ADDR, ...) for the local cluster",
}

func devClusterCommands() map[string]cli.CommandFactory {
	out := map[string]cli.CommandFactory{
		"dev-cluster": func() (cli.Command, error) { return &devClusterCommand{out: os.Stdout}, nil },
	}
	for verb := range devClusterSynopses {
		out["dev-cluster "+verb] = func() (cli.Command, error) { return &devClusterCommand{verb: verb, out: os.Stdout}, nil }
	}
	out["dev-cluster exporter"] = exporterCommand()
	out["dev-cluster spike"] = spikeCommand()
	return out
}

func (c *devClusterCommand) Synopsis() string {
	if c.verb == "" {
		return "Run a local cluster of real processes for the demo and tests"
	}
	return devClusterSynopses[c.verb]
}

func (c *devClusterCommand) Help() string {
	if c.verb == "" {
		return "Usage: harvest-dev dev-cluster <up|down|status|env|spike> [options]\n\n  " + c.Synopsis() + "."
	}
	fs := flag.NewFlagSet(c.verb, flag.ContinueOnError)
	c.flags.register(fs)
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: harvest-dev dev-cluster %s [options]\n\n  %s.\n\nOptions:\n\n", c.verb, c.Synopsis())
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

func (c *devClusterCommand) Run(args []string) int {
	if c.verb == "" {
		return cli.RunResultHelp
	}
	fs := flag.NewFlagSet(c.verb, flag.ContinueOnError)
	c.flags.register(fs)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "dev-cluster", Level: hclog.Info, Output: os.Stderr})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch c.verb {
	case "up":
		err = c.up(ctx, log)
	case "down":
		err = c.down(log)
	case "status":
		err = c.status()
	case "env":
		err = c.env()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "harvest-dev dev-cluster %s: %v\n", c.verb, err)
		return 1
	}
	return 0
}

func (c *devClusterCommand) up(ctx context.Context, log hclog.Logger) error {
	if c.flags.clients < 3 {
		return fmt.Errorf("-clients must be at least 3, got %d", c.flags.clients)
	}
	s, err := localcluster.Up(ctx, localcluster.Options{
		RunDir: c.flags.runDir, StackBin: c.flags.stackBin, DriverBinary: c.flags.driver,
		UsagePlugin: c.flags.usagePlugin, DevTool: selfPath(),
		Nodes: localcluster.DefaultNodes(c.flags.clients), Detached: true, Logger: log, Secure: c.flags.secure, Bare: c.flags.bare,
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.RunDir, "env.sh"), []byte(envExports(s)), 0o600); err != nil {
		return err
	}
	printSummary(c.out, s)
	return nil
}

func (c *devClusterCommand) down(log hclog.Logger) error {
	// Clusters left by killed test runs go too.
	localcluster.SweepStale(context.Background(), localcluster.DefaultClaimDir(), log)
	s, err := localcluster.Load(c.flags.runDir)
	if os.IsNotExist(err) {
		fmt.Fprintf(c.out, "no cluster in %s\n", c.flags.runDir)
		return nil
	}
	if err != nil {
		return err
	}
	if err := localcluster.Down(context.Background(), s, log); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "cluster in %s stopped; checked that none of its %d processes, no task, mount or cgroup is left (logs kept in %s)\n",
		s.RunDir, len(s.PIDs()), filepath.Join(s.RunDir, "logs"))
	return nil
}

func (c *devClusterCommand) status() error {
	s, err := localcluster.Load(c.flags.runDir)
	if err != nil {
		return fmt.Errorf("no cluster in %s: %w", c.flags.runDir, err)
	}
	printSummary(c.out, s)
	if stopped := s.Stopped(); len(stopped) > 0 {
		return fmt.Errorf("not running: %s (see the logs in %s)", strings.Join(stopped, ", "), filepath.Join(s.RunDir, "logs"))
	}
	return nil
}

func (c *devClusterCommand) env() error {
	s, err := localcluster.Load(c.flags.runDir)
	if err != nil {
		return fmt.Errorf("no cluster in %s: %w", c.flags.runDir, err)
	}
	fmt.Fprint(c.out, envExports(s))
	return nil
}
