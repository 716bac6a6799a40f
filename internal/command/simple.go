package command

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/cli"
)

// Simple is a subcommand made of a flag set and a run function. Run gets a
// context that ends on SIGINT or SIGTERM and the parsed flags; an error is
// printed as "<name>: <error>" with exit code 1. A second SIGINT or SIGTERM
// ends the process at once, as if nothing caught it, for a Run that does
// not return soon after its context ends (a long simulation between its
// checks).
type Simple struct {
	Name     string // e.g. "harvestctl history import"
	Synopsis string
	Usage    string // the line(s) after "Usage: "
	Flags    func(fs *flag.FlagSet)
	Run      func(ctx context.Context, fs *flag.FlagSet) error
}

var _ cli.Command = (*simpleCommand)(nil)

// Factory returns a cli.CommandFactory for s.
func (s Simple) Factory() cli.CommandFactory {
	return func() (cli.Command, error) { return &simpleCommand{s}, nil }
}

type simpleCommand struct{ s Simple }

func (c *simpleCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(c.s.Name, flag.ContinueOnError)
	if c.s.Flags != nil {
		c.s.Flags(fs)
	}
	return fs
}

func (c *simpleCommand) Synopsis() string { return c.s.Synopsis }

func (c *simpleCommand) Help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n  %s.\n", c.s.Usage, c.s.Synopsis)
	fs := c.flagSet()
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		b.WriteString("\nOptions:\n\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
	}
	return b.String()
}

func (c *simpleCommand) Run(args []string) int {
	fs := c.flagSet()
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			// the next signal is the default's, which ends the process
			signal.Stop(sigs)
			fmt.Fprintf(os.Stderr, "%s: interrupted, stopping\n", c.s.Name)
			cancel()
		case <-ctx.Done(): // Run returned
		}
	}()
	if err := c.s.Run(ctx, fs); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.s.Name, err)
		return 1
	}
	return 0
}

// Group is the command that only names its subcommands (harvestctl history,
// harvestctl explain): run alone, it shows its usage and says which
// subcommands there are.
func Group(name, synopsis, usage string, subcommands ...string) cli.CommandFactory {
	return Simple{Name: name, Synopsis: synopsis, Usage: usage,
		Run: func(context.Context, *flag.FlagSet) error {
			return fmt.Errorf("name a subcommand: %s", strings.Join(subcommands, ", "))
		},
	}.Factory()
}
