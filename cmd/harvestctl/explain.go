package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/connect"
)

// explainCommands are `harvestctl explain job|alloc|object` and
// `harvestctl status`: why a job got its classes, why a task was evicted,
// where an object's replicas are, and one screen of every harvested node.
func explainCommands() map[string]cli.CommandFactory {
	var consul consulFlags
	var nomadAddr, namespace, blobAddr string
	var asJSON bool
	nomadFlag := func(fs *flag.FlagSet) {
		fs.StringVar(&nomadAddr, "nomad-addr", "", "Nomad HTTP API address (default: NOMAD_ADDR, else http://127.0.0.1:4646); token and TLS from NOMAD_TOKEN, NOMAD_CACERT, ...")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	}
	return map[string]cli.CommandFactory{
		"explain": command.Group("harvestctl explain", "Say why Harvest placed a job, evicted a task or put an object's replicas where they are",
			"harvestctl explain <job JOB | alloc ALLOC | object BUCKET KEY>", "job", "alloc", "object"),
		"explain object": explainObjectCommand(),
		"explain job": command.Simple{
			Name: "harvestctl explain job", Synopsis: "Say why the admission proxy gave a job its classes, and where it ran",
			Usage: "harvestctl explain job [-namespace NS] [-json] [options] JOB",
			Flags: func(fs *flag.FlagSet) {
				consul.register(fs)
				nomadFlag(fs)
				fs.StringVar(&namespace, "namespace", envOr("NOMAD_NAMESPACE", "default"), "the job's Nomad namespace")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				job, err := oneArg(fs, "JOB")
				if err != nil {
					return err
				}
				store, err := consul.store()
				if err != nil {
					return err
				}
				nomad, err := connect.Nomad{Address: nomadAddr}.Client()
				if err != nil {
					return err
				}
				e, err := explainJob(ctx, nomad, store, namespace, job)
				if err != nil {
					return err
				}
				return printJobExplanation(os.Stdout, e, asJSON)
			},
		}.Factory(),
		"explain alloc": command.Simple{
			Name: "harvestctl explain alloc", Synopsis: "Say why the harvest driver suppressed or evicted an allocation's task",
			Usage: "harvestctl explain alloc [-json] [options] ALLOC_ID_OR_PREFIX",
			Flags: nomadFlag,
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				id, err := oneArg(fs, "ALLOC")
				if err != nil {
					return err
				}
				nomad, err := connect.Nomad{Address: nomadAddr}.Client()
				if err != nil {
					return err
				}
				e, err := explainAlloc(ctx, nomad, id)
				if err != nil {
					return err
				}
				return printAllocExplanation(os.Stdout, e, asJSON)
			},
		}.Factory(),
		"status": command.Simple{
			Name: "harvestctl status", Synopsis: "Show every harvested node: tenant, class, primary usage, reserve, harvested work, evictions, storage",
			Usage: "harvestctl status [-json] [-blob-admin-addr URL] [options]",
			Flags: func(fs *flag.FlagSet) {
				consul.register(fs)
				nomadFlag(fs)
				fs.StringVar(&blobAddr, "blob-admin-addr", os.Getenv("HARVEST_BLOB_ADMIN_ADDR"), "harvest-blob's admin API, for the storage column (\"\": not asked)")
			},
			Run: func(ctx context.Context, fs *flag.FlagSet) error {
				store, err := consul.store()
				if err != nil {
					return err
				}
				nomad, err := connect.Nomad{Address: nomadAddr}.Client()
				if err != nil {
					return err
				}
				var blob *api.BlobStatus
				note := "STORAGE: not asked (set -blob-admin-addr or HARVEST_BLOB_ADMIN_ADDR)"
				if blobAddr != "" {
					if st, err := blobStatus(ctx, blobAddr); err != nil {
						note = fmt.Sprintf("STORAGE: harvest-blob at %s did not answer: %v", blobAddr, err)
					} else {
						blob, note = &st, ""
					}
				}
				rows, err := clusterStatus(ctx, nomad, store, blob, time.Now())
				if err != nil {
					return err
				}
				return printStatus(os.Stdout, rows, note, asJSON)
			},
		}.Factory(),
	}
}
