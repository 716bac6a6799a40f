// Package command owns the command-line shape shared by every Harvest binary,
// as Nomad's own CLI does it: subcommands, -h/--help at every level, and
// -v/--version plus a `version` subcommand.
package command

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/version"
)

// Main runs binary's command line with the given subcommands (a `version`
// subcommand is added) and returns the process exit code.
func Main(binary, synopsis string, args []string, commands map[string]cli.CommandFactory) int {
	return run(binary, synopsis, args, commands, os.Stdout, os.Stderr)
}

func run(binary, synopsis string, args []string, commands map[string]cli.CommandFactory, stdout, stderr io.Writer) int {
	all := map[string]cli.CommandFactory{
		"version": func() (cli.Command, error) { return &versionCommand{binary: binary, out: stdout}, nil },
	}
	for name, f := range commands {
		all[name] = f
	}
	c := &cli.CLI{
		Name:        binary,
		Args:        args,
		Version:     version.String(binary),
		Commands:    all,
		HelpFunc:    helpFunc(binary, synopsis),
		HelpWriter:  stdout,
		ErrorWriter: stderr,
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		return 1
	}
	return code
}

// helpFunc prints the synopsis above the list of subcommands.
func helpFunc(binary, synopsis string) cli.HelpFunc {
	return func(commands map[string]cli.CommandFactory) string {
		var b strings.Builder
		fmt.Fprintf(&b, "Usage: %s [--version] [--help] <command> [<args>]\n\n%s\n\nCommands:\n", binary, synopsis)
		names := make([]string, 0, len(commands))
		width := 0
		for name := range commands {
			names = append(names, name)
			width = max(width, len(name))
		}
		sort.Strings(names)
		for _, name := range names {
			cmd, err := commands[name]()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "    %-*s    %s\n", width, name, cmd.Synopsis())
		}
		return b.String()
	}
}

type versionCommand struct {
	binary string
	out    io.Writer
}

var _ cli.Command = (*versionCommand)(nil)

func (c *versionCommand) Synopsis() string { return "Print the version of " + c.binary }
func (c *versionCommand) Help() string {
	return "Usage: " + c.binary + " version\n\n  " + c.Synopsis() + "."
}
func (c *versionCommand) Run([]string) int {
	fmt.Fprintln(c.out, version.String(c.binary))
	return 0
}
