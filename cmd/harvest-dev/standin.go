package main

// harvest-dev standin, standin-load and burn: the testbed's real primary (a
// latency-critical stand-in service), its load from a process of its own,
// and the CPU its harvested tasks burn beside it (internal/testbed,
// -real-primary).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/burn"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/standin"
)

// standinCommand is `harvest-dev standin`: the latency-critical stand-in
// (every request burns standin.RequestCPU), on -listen or on the listener
// its parent passed as file descriptor 3 (-inherited).
func standinCommand() cli.CommandFactory {
	var addr string
	var inherited bool
	return command.Simple{
		Name: "harvest-dev standin", Synopsis: "Serve the latency-critical stand-in primary (every request burns 2 ms of CPU)",
		Usage: "harvest-dev standin (-listen ADDR | -inherited)",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&addr, "listen", "", "address to listen on")
			fs.BoolVar(&inherited, "inherited", false, "serve on the listener passed as file descriptor 3")
		},
		Run: func(context.Context, *flag.FlagSet) error {
			switch {
			case inherited == (addr != ""):
				return errors.New("want one of -listen ADDR and -inherited")
			case addr != "":
				return standin.Serve(addr)
			}
			l, err := net.FileListener(os.NewFile(3, "listener"))
			if err != nil {
				return fmt.Errorf("the inherited listener (fd 3): %w", err)
			}
			return standin.ServeOn(l)
		},
	}.Factory()
}

// standinLoadCommand is `harvest-dev standin-load`: the stand-in's load
// from a process of its own (standin.DriveFrom starts it, at a real-time
// priority): a standin.Schedule on standard input, one JSON line per reply
// on standard output.
func standinLoadCommand() cli.CommandFactory {
	var addr string
	return command.Simple{
		Name: "harvest-dev standin-load", Synopsis: "Drive the stand-in by a schedule read on standard input",
		Usage: "harvest-dev standin-load -addr ADDR < schedule.json",
		Flags: func(fs *flag.FlagSet) { fs.StringVar(&addr, "addr", "", "the stand-in's address") },
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			if addr == "" {
				return errors.New("want -addr ADDR")
			}
			return standin.ServeLoad(ctx, addr, os.Stdin, os.Stdout)
		},
	}.Factory()
}

// burnCommand is `harvest-dev burn`: burn a share of one core, counted in
// the process's own CPU time (burn.Forever), for a while.
func burnCommand() cli.CommandFactory {
	var share, seconds float64
	return command.Simple{
		Name: "harvest-dev burn", Synopsis: "Burn a share of one core for a while",
		Usage: "harvest-dev burn -share S -seconds N",
		Flags: func(fs *flag.FlagSet) {
			fs.Float64Var(&share, "share", 1, "share of one core to burn, in (0, 1]")
			fs.Float64Var(&seconds, "seconds", 0, "how long to burn (wall seconds)")
		},
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			if share <= 0 || share > 1 || seconds < 0 {
				return fmt.Errorf("-share %g -seconds %g: want a share in (0, 1] and seconds of at least 0", share, seconds)
			}
			go burn.Forever(share)
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(seconds * float64(time.Second))):
			}
			return nil
		},
	}.Factory()
}
