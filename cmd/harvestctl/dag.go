package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/jobspec2"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/placer/dag"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// varFlags is the repeatable -var key=value flag, as `nomad job run` has.
type varFlags []string

func (v *varFlags) String() string     { return strings.Join(*v, ",") }
func (v *varFlags) Set(s string) error { *v = append(*v, s); return nil }

func dagCommands() map[string]cli.CommandFactory {
	var vars varFlags
	var asJSON bool
	return map[string]cli.CommandFactory{
		"dag": command.Group("harvestctl dag", "Inspect a harvested DAG job's stages offline",
			"harvestctl dag estimate [options] job.nomad.hcl", "estimate"),
		"dag estimate": command.Simple{
			Name: "harvestctl dag estimate", Synopsis: "Estimate a harvested job's peak concurrent resources offline",
			Usage: "harvestctl dag estimate [-var key=value] [-json] job.nomad.hcl",
			Flags: func(fs *flag.FlagSet) {
				fs.Var(&vars, "var", "an HCL2 variable, key=value (repeatable)")
				fs.BoolVar(&asJSON, "json", false, "print JSON")
			},
			Run: func(_ context.Context, fs *flag.FlagSet) error {
				path, err := oneArg(fs, "job file")
				if err != nil {
					return err
				}
				body, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				job, err := jobspec2.ParseWithConfig(&jobspec2.ParseConfig{
					Path: path, BaseDir: filepath.Dir(path), Body: body, ArgVars: vars, AllowFS: true, Strict: true,
				})
				if err != nil {
					return err
				}
				raw, err := json.Marshal(job)
				if err != nil {
					return err
				}
				var tree map[string]any
				if err := json.Unmarshal(raw, &tree); err != nil {
					return err
				}
				stages, err := proxy.StagesOf(tree)
				if err != nil {
					return err
				}
				est, err := dag.Plan(stages)
				if err != nil {
					return err
				}
				if asJSON {
					return command.PrintJSON(os.Stdout, est)
				}
				tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "LEVEL\tSTAGES (run together)\tTASKS\tCPU MHz\tMEMORY MB")
				for i, l := range est.Levels {
					r := est.Level[i]
					fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\n", i+1, strings.Join(l, ", "), r.Tasks, r.CPU, r.MemoryMB)
				}
				tw.Flush()
				fmt.Printf("\npeak concurrent: %d tasks, %d MHz, %d MB\n", est.Peak.Tasks, est.Peak.CPU, est.Peak.MemoryMB)
				return nil
			},
		}.Factory(),
	}
}
