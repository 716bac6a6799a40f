// Command primary-tail finds which side of the testbed's real primary
// raises its p99 when harvested tasks run (docs/testbed.md, "Where the real
// primary's tail comes from"). The testbed pins the stand-in to one CPU,
// with the harvested tasks that land on its client burning there at
// SCHED_IDLE (cpu.idle = 1), and drives it from its own process on the other
// CPU, beside every daemon. So a busier control plane can lengthen the
// measured latency on the measuring side, not the primary's. This command
// runs the stand-in and its load (internal/standin, as the testbed does)
// under four conditions, in turn over cycles so all see the same
// background:
//
//   - quiet: nothing else on either CPU;
//   - driver-cpu-busy: a burner at normal priority on the driver's CPU,
//     as the daemons are when tasks start, stop and read;
//   - primary-cpu-idle-burn: a SCHED_IDLE burner on the stand-in's CPU, as
//     the harvested tasks are;
//   - both.
//
// Per condition, the median over cycles of the window's p99 of: the
// latency, the handler's wait for a CPU, the time outside the handler, and
// the driver's own lateness before sending. With -realtime-load the load
// runs as the testbed's -realtime-load runs it: from a process of its own
// at SCHED_FIFO on the driver's CPU (standin.RealtimeLoad). Run on an
// otherwise quiet host from the repository, after make build:
//
//	taskset -c 0 go run ./scripts/primary-tail -cycles 3 -window 30s [-realtime-load]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/internal/standin"
)

// condition is what else runs in a window.
type condition struct {
	name                  string
	driverBusy, idleBurns bool
}

var conditions = []condition{
	{"quiet", false, false},
	{"driver-cpu-busy", true, false},
	{"primary-cpu-idle-burn", false, true},
	{"both", true, true},
}

func main() {
	cycles := flag.Int("cycles", 3, "cycles of windows, every condition in each")
	window := flag.Duration("window", 30*time.Second, "one condition's window")
	rate := flag.Int("rate", 180, "requests a second (the testbed's real primary ran about 190)")
	bin := flag.String("harvest-dev", "bin/harvest-dev", "the harvest-dev binary (standin and burn)")
	primaryCPU := flag.Int("primary-cpu", 1, "the CPU the stand-in and the idle burner are pinned to")
	driverCPU := flag.Int("driver-cpu", 0, "the CPU of this process (run it under taskset -c N) and of the busy burner")
	busyShare := flag.Float64("busy-share", 0.5, "share of the driver's CPU the busy burner takes")
	realtime := flag.Bool("realtime-load", false, "drive the stand-in from a process of its own at SCHED_FIFO on the driver's CPU, as the testbed's -realtime-load does")
	flag.Parse()
	if *window <= 0 || *window > time.Minute {
		fmt.Fprintln(os.Stderr, "primary-tail: -window must be within a minute (each window is one of standin.Minutes' minutes)")
		os.Exit(2)
	}
	var load []string
	if *realtime {
		load = standin.RealtimeLoad(*bin, strconv.Itoa(*driverCPU))
	}
	if err := run(*cycles, *window, *rate, *bin, *primaryCPU, *driverCPU, *busyShare, load); err != nil {
		fmt.Fprintln(os.Stderr, "primary-tail:", err)
		os.Exit(1)
	}
}

func run(cycles int, window time.Duration, rate int, bin string, primaryCPU, driverCPU int, busyShare float64, load []string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	server := exec.Command("taskset", "-c", strconv.Itoa(primaryCPU), bin, "standin", "-listen", addr)
	server.Stderr = os.Stderr
	if err := server.Start(); err != nil {
		return err
	}
	defer func() { _ = server.Process.Kill(); _ = server.Wait() }()
	time.Sleep(time.Second)
	standin.Latencies(addr, rate, 2*time.Second) // warm up
	seconds := strconv.FormatFloat(window.Seconds()+1, 'f', 0, 64)
	got := map[string][]standin.Minute{}
	for cycle := 1; cycle <= cycles; cycle++ {
		for _, c := range conditions {
			var others []*exec.Cmd
			if c.driverBusy {
				others = append(others, exec.Command("taskset", "-c", strconv.Itoa(driverCPU), bin, "burn",
					"-share", strconv.FormatFloat(busyShare, 'f', 2, 64), "-seconds", seconds))
			}
			if c.idleBurns {
				others = append(others, exec.Command("chrt", "-i", "0", "taskset", "-c", strconv.Itoa(primaryCPU), bin, "burn",
					"-share", "1", "-seconds", seconds))
			}
			for _, o := range others {
				if err := o.Start(); err != nil {
					return err
				}
			}
			f, err := measure(addr, rate, window, load)
			for _, o := range others {
				_ = o.Process.Kill()
				_ = o.Wait()
			}
			if err != nil {
				return err
			}
			got[c.name] = append(got[c.name], f)
			fmt.Fprintf(os.Stderr, "cycle %d/%d %-22s p99 %6.2f ms: handler wait %5.2f, outside %6.2f, driver late %6.2f\n",
				cycle, cycles, c.name, f.P99ms, f.P99HandlerWaitMs, f.P99OutsideHandlerMs, f.P99DriverLateMs)
		}
	}
	where := "from this process"
	if load != nil {
		where = "from a SCHED_FIFO process on CPU " + strconv.Itoa(driverCPU)
	}
	fmt.Printf("median over %d cycles of each %v window's p99 (ms), %d requests/s %s:\n", cycles, window, rate, where)
	fmt.Printf("  %-22s %8s %13s %16s %12s\n", "condition", "latency", "handler wait", "outside handler", "driver late")
	for _, c := range conditions {
		fs := got[c.name]
		med := func(pick func(standin.Minute) float64) float64 {
			xs := make([]float64, len(fs))
			for i, f := range fs {
				xs[i] = pick(f)
			}
			return standin.Median(xs)
		}
		fmt.Printf("  %-22s %8.2f %13.2f %16.2f %12.2f\n", c.name, med(func(f standin.Minute) float64 { return f.P99ms }),
			med(func(f standin.Minute) float64 { return f.P99HandlerWaitMs }), med(func(f standin.Minute) float64 { return f.P99OutsideHandlerMs }),
			med(func(f standin.Minute) float64 { return f.P99DriverLateMs }))
	}
	return nil
}

// measure drives the stand-in for one window, from this process or from
// load's (standin.DriveFrom), and returns its p99s, as the testbed's real
// primary reports a minute.
func measure(addr string, rate int, window time.Duration, load []string) (standin.Minute, error) {
	start := time.Now()
	if load != nil {
		start = start.Add(200 * time.Millisecond) // the load process's start
	}
	log := standin.NewMinutes(start)
	rateAt := func(time.Time) float64 { return float64(rate) }
	var err error
	if load == nil {
		standin.Drive(context.Background(), addr, start, window, rateAt, log.Record)
	} else {
		err = standin.DriveFrom(context.Background(), load, addr, standin.SampleSchedule(rateAt, start, window, window), log.Record, os.Stderr)
	}
	return log.Report(1, 1)[0], err
}
