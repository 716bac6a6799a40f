package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/burn"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/localcluster"
)

// spikeShareEnv makes harvest-dev, started again by `dev-cluster spike`, one
// burner process of the spike: it burns that share of a core until killed.
const spikeShareEnv = "HARVEST_DEV_SPIKE_SHARE"

// burnIfAsked turns this process into a spike's burner when spikeShareEnv
// is set; it never returns then.
func burnIfAsked() {
	v := os.Getenv(spikeShareEnv)
	if v == "" {
		return
	}
	share, err := strconv.ParseFloat(v, 64)
	if err != nil || share <= 0 || share > 1 {
		fmt.Fprintf(os.Stderr, "%s=%q: want a share of a core in (0, 1]\n", spikeShareEnv, v)
		os.Exit(2)
	}
	if err := burn.Gated(share, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "burner: %v\n", err)
		os.Exit(2)
	}
}

// spikeCommand is `harvest-dev dev-cluster spike`: the primary tenant of a
// local-cluster node uses more CPU for a while, as a real service's load
// spike would, so that the node's harvest driver suppresses and evicts.
func spikeCommand() cli.CommandFactory {
	var runDir, node string
	var cores float64
	var lasting time.Duration
	return command.Simple{
		Name: "harvest-dev dev-cluster spike", Synopsis: "Make a local-cluster node's primary tenant burn CPU for a while",
		Usage: "harvest-dev dev-cluster spike -node NODE [-cores N] [-for DURATION] [-run-dir DIR]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&runDir, "run-dir", envOr("HARVEST_RUN_DIR", ".run/cluster"), "run folder of the cluster")
			fs.StringVar(&node, "node", "", "the node whose primary tenant spikes (e.g. client-1)")
			fs.Float64Var(&cores, "cores", 0.6, "CPU the primary tenant burns, in cores (spread over processes of at most one core each)")
			fs.DurationVar(&lasting, "for", 30*time.Second, "how long the spike lasts")
		},
		Run: func(ctx context.Context, fs *flag.FlagSet) error {
			if node == "" {
				return errors.New("-node is required")
			}
			if cores <= 0 || cores > 64 || lasting <= 0 {
				return fmt.Errorf("want 0 < -cores <= 64 and -for > 0, got %g and %s", cores, lasting)
			}
			s, err := localcluster.Load(runDir)
			if err != nil {
				return fmt.Errorf("no cluster in %s: %w", runDir, err)
			}
			return spike(ctx, s, node, cores, lasting)
		},
	}.Factory()
}

// spike starts the burners in node's primary cgroup, waits, and stops them.
func spike(ctx context.Context, s *localcluster.State, node string, cores float64, lasting time.Duration) error {
	n := int(math.Ceil(cores))
	share := cores / float64(n)
	var burners []*exec.Cmd
	defer func() {
		for _, b := range burners {
			_ = b.Process.Kill()
			_ = b.Wait()
		}
	}()
	for i := 0; i < n; i++ {
		// At nice -10 where allowed: the primary tenant owns its server,
		// while this machine is shared with other work at nice 0.
		b := exec.Command("nice", "-n", "-10", selfPath())
		if os.Geteuid() != 0 {
			b = exec.Command(selfPath())
		}
		b.Env = append(os.Environ(), spikeShareEnv+"="+strconv.FormatFloat(share, 'f', 3, 64))
		b.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		// joined once started (burn.Gated), so that the primary's spike is
		// the burn alone and not harvestctl's own start-up
		err := burn.StartGated(b, func(pid int) error { return s.JoinPrimary(node, pid) }, time.Minute)
		if b.Process != nil {
			burners = append(burners, b)
		}
		if err != nil {
			return fmt.Errorf("starting a burner in %s's primary cgroup: %w", node, err)
		}
	}
	fmt.Printf("%s: the primary tenant burns %.2f cores (%d processes) for %s\n", node, cores, n, lasting)
	end := time.Now().Add(lasting)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			fmt.Printf("%s: spike stopped early\n", node)
			return nil
		case <-tick.C:
			fmt.Printf("%s: spiking, %s left\n", node, time.Until(end).Round(time.Second))
		case <-time.After(time.Until(end)):
		}
	}
	fmt.Printf("%s: spike over\n", node)
	return nil
}
