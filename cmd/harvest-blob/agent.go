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

func agentCommand() cli.CommandFactory {
	var configPath string
	return command.Simple{
		Name: "harvest-blob agent", Synopsis: "Serve S3 from the harvested storage nodes",
		Usage: "harvest-blob agent -config blob.hcl",
		Flags: func(fs *flag.FlagSet) { fs.StringVar(&configPath, "config", "", "HCL configuration file (required)") },
		Run: func(_ context.Context, _ *flag.FlagSet) error {
			cfg, err := blobd.LoadConfig(configPath)
			if err != nil {
				return err
			}
			log := hclog.New(&hclog.LoggerOptions{Name: "blob", Level: hclog.LevelFromString(cfg.LogLevel)})
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return blobd.Run(ctx, cfg, log)
		},
	}.Factory()
}

func rebuildCommand() cli.CommandFactory {
	var configPath string
	return command.Simple{
		Name: "harvest-blob rebuild", Synopsis: "Rebuild the catalogue and bucket records from the storage nodes alone",
		Usage: "harvest-blob rebuild -config blob.hcl",
		Flags: func(fs *flag.FlagSet) { fs.StringVar(&configPath, "config", "", "HCL configuration file (required)") },
		Run: func(_ context.Context, _ *flag.FlagSet) error {
			cfg, err := blobd.LoadConfig(configPath)
			if err != nil {
				return err
			}
			log := hclog.New(&hclog.LoggerOptions{Name: "blob", Level: hclog.LevelFromString(cfg.LogLevel)})
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := blobd.Rebuild(ctx, cfg, log)
			if err != nil {
				return err
			}
			fmt.Printf("nodes %d (unreachable %d); buckets restored %d; objects found %d, written %d, already current %d; replicas without metadata %d\n",
				rep.Nodes, rep.Unreachable, rep.Buckets, rep.Objects, rep.Written, rep.KeptNewer, rep.UnreadableReplicas)
			return nil
		},
	}.Factory()
}
