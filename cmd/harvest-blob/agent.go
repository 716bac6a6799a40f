package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/storage/blobd"
)

// withConfig is a command that reads -config, logs at its log_level and
// runs until done or SIGINT/SIGTERM; on SIGHUP it reads -config again and
// hands a configuration that loads to run (one that does not is logged and
// changes nothing).
func withConfig(name, synopsis string, run func(context.Context, blobd.Config, hclog.Logger, <-chan blobd.Config) error) cli.CommandFactory {
	var configPath string
	return command.Simple{
		Name: "harvest-blob " + name, Synopsis: synopsis,
		Usage: "harvest-blob " + name + " -config blob.hcl",
		Flags: func(fs *flag.FlagSet) { fs.StringVar(&configPath, "config", "", "HCL configuration file (required)") },
		Run: func(_ context.Context, _ *flag.FlagSet) error {
			cfg, err := blobd.LoadConfig(configPath)
			if err != nil {
				return err
			}
			log := hclog.New(&hclog.LoggerOptions{Name: "blob", Level: hclog.LevelFromString(cfg.LogLevel)})
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			reloads := make(chan blobd.Config)
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-hup:
					}
					next, err := blobd.LoadConfig(configPath)
					if err != nil {
						log.Error("SIGHUP: the configuration does not load; nothing changed", "config", configPath, "error", err)
						continue
					}
					select {
					case reloads <- next:
					case <-ctx.Done():
						return
					}
				}
			}()
			return run(ctx, cfg, log, reloads)
		},
	}.Factory()
}

func agentCommand() cli.CommandFactory {
	return withConfig("agent", "Serve S3 from the harvested storage nodes", blobd.Run)
}

func rebuildCommand() cli.CommandFactory {
	return withConfig("rebuild", "Rebuild the catalogue and bucket records from the storage nodes alone",
		func(ctx context.Context, cfg blobd.Config, log hclog.Logger, _ <-chan blobd.Config) error {
			rep, err := blobd.Rebuild(ctx, cfg, log)
			if err != nil {
				return err
			}
			fmt.Printf("nodes %d (unreachable %d); buckets restored %d; objects found %d, written %d, already current %d; replicas without metadata %d\n",
				rep.Nodes, rep.Unreachable, rep.Buckets, rep.Objects, rep.Written, rep.KeptNewer, rep.UnreadableReplicas)
			return nil
		})
}
