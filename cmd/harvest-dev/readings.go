package main

// harvest-dev measure readings: how far the harvest driver's readings of a
// primary tenant's CPU are from the truth on a saturated machine. A burner of
// known rate (0.2, 0.6, 1.4 cores) runs in a cgroup of its own at nice -20,
// so that it gets its rate whatever else runs; busy loops at normal priority
// (twice the CPUs) and a burst load (processes started and ended as fast as
// two threads can) saturate the machine; this process reads the cgroup's CPU
// counter at normal priority, as the driver does, every 200 ms (the guard
// tick, guard_interval's default) and every 50 ms (the spike check's peek).
//
// The truth is a reference reader of the same counter on a SCHED_FIFO
// thread, which nothing at normal priority can preempt: every 2 ms it reads
// the counter between two clock readings microseconds apart. The counter's
// value at any instant is interpolated from its readings. Each window a
// method rates is compared with the reference's rate over the window the
// method says it measured: that difference is the reading's error, whatever
// the burner did meanwhile. Each window is rated twice from the same
// readings: as the driver did before its readings were timed on both sides
// ("untimed": the counter's increase over the time between the clock reads
// that followed the counter reads) and as it does now ("timed":
// usagesource.Meter, over the middles of the readings' intervals, windows
// uncertain by more than a tenth merged into the next; "timed-least" is the
// least rate the readings allow, what a spike is acted on).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/cli"
	"golang.org/x/sys/unix"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/usage"
	"github.com/harvest-platform/harvest/internal/burn"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// The windows the driver reads over, by default.
const (
	tickEvery = 200 * time.Millisecond // guard_interval
	peekEvery = 50 * time.Millisecond  // spike_check
)

func readingsCommand() cli.CommandFactory {
	var ratesFlag, jsonOut string
	var phase time.Duration
	var stress bool
	return command.Simple{
		Name: "harvest-dev measure readings", Synopsis: "Measure the driver's reading error of a primary's CPU on a saturated machine",
		Usage: "harvest-dev measure readings [-rates 0.2,0.6,1.4] [-for 30s] [-stress=true] [-json FILE]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&ratesFlag, "rates", "0.2,0.6,1.4", "the burner's rates, in cores, one phase each")
			fs.DurationVar(&phase, "for", 30*time.Second, "how long each rate is read")
			fs.BoolVar(&stress, "stress", true, "saturate the machine with busy loops and a burst of short-lived processes")
			fs.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file")
		},
		Run: func(ctx context.Context, fs *flag.FlagSet) error {
			var rates []float64
			for _, f := range strings.Split(ratesFlag, ",") {
				r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || r <= 0 || r > 8 {
					return fmt.Errorf("-rates %q: want cores in (0, 8]", ratesFlag)
				}
				rates = append(rates, r)
			}
			if phase < 5*time.Second {
				return fmt.Errorf("-for %s: want at least 5s", phase)
			}
			if os.Geteuid() != 0 {
				return fmt.Errorf("needs root: it makes a cgroup and renices the burner")
			}
			return measureReadings(ctx, rates, phase, stress, jsonOut)
		},
	}.Factory()
}

// readingResult is one rate's errors, in cores, by window and method.
type readingResult struct {
	Rate      float64              `json:"rate_cores"`
	Delivered float64              `json:"delivered_cores"` // what the burner used over the phase, by the reference reader
	Errors    map[string]errorDist `json:"errors"`          // key: window/method
	Discarded map[string]int       `json:"discarded"`       // windows the timed method did not rate, by window
}

func measureReadings(ctx context.Context, rates []float64, phase time.Duration, stress bool, jsonOut string) error {
	cg, cleanup, err := newMeasureCgroup()
	if err != nil {
		return err
	}
	defer cleanup()
	if stress {
		stop, err := burn.Saturate(2*numCPU(), burstThreads)
		if err != nil {
			return err
		}
		defer stop()
		fmt.Printf("stress: %d busy loops at nice 0 and a burst of short-lived processes\n", 2*numCPU())
	}
	var results []readingResult
	for _, rate := range rates {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Printf("rate %.2f cores: burner at nice -20 in %s, reading for %s\n", rate, cg.dir, phase)
		res, err := measureRate(ctx, cg, rate, phase)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	printReadings(os.Stdout, results)
	if jsonOut != "" {
		data, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(jsonOut, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// measureRate runs burners of rate cores in the cgroup and reads it.
func measureRate(ctx context.Context, cg *measureCgroup, rate float64, phase time.Duration) (readingResult, error) {
	stop, err := startBurners(cg, rate)
	defer stop()
	if err != nil {
		return readingResult{}, err
	}
	select { // the burners settle into their periods
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return readingResult{}, ctx.Err()
	}
	res := readingResult{Rate: rate, Errors: map[string]errorDist{}, Discarded: map[string]int{}}
	rctx, cancel := context.WithTimeout(ctx, phase)
	defer cancel()
	ref := &timeline{}
	refDone := make(chan error, 1)
	go func() { refDone <- ref.follow(rctx, cg) }()
	var mu sync.Mutex
	var windows []window
	var wg sync.WaitGroup
	for _, w := range []struct {
		name  string
		every time.Duration
	}{{"tick", tickEvery}, {"peek", peekEvery}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, discarded := readWindows(rctx, cg, w.name, w.every)
			mu.Lock()
			defer mu.Unlock()
			windows = append(windows, got...)
			res.Discarded[w.name] = discarded
		}()
	}
	wg.Wait()
	if err := <-refDone; err != nil {
		return res, err
	}
	errs := map[string][]float64{}
	for _, w := range windows {
		if truth, ok := ref.rate(w.from, w.to); ok {
			errs[w.kind] = append(errs[w.kind], w.rate-truth)
		}
	}
	for kind, e := range errs {
		res.Errors[kind] = distOf(e)
	}
	if n := len(ref.at); n > 1 {
		res.Delivered = (ref.v[n-1] - ref.v[0]) / ref.at[n-1].Sub(ref.at[0]).Seconds()
	}
	return res, ctx.Err()
}

// window is a rate a method gave, over the window it says it measured.
type window struct {
	kind     string // <window>/<method>
	from, to time.Time
	rate     float64
}

// readWindows reads the counter every `every` until ctx ends and returns
// the windows each method rated, and how many the timed method did not.
func readWindows(ctx context.Context, cg *measureCgroup, name string, every time.Duration) ([]window, int) {
	var out []window
	var meter usagesource.Meter
	prev, err := cg.read()
	if err != nil {
		return nil, 0
	}
	meter.Start(prev)
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	discarded := 0
	for {
		select {
		case <-ctx.Done():
			return out, discarded
		case <-ticker.C:
		}
		r, err := cg.read()
		if err != nil {
			continue
		}
		// before: the counter read, then the clock: the time after it
		if d := r.After.Sub(prev.After); d > 0 {
			out = append(out, window{name + "/untimed", prev.After, r.After, (r.Value - prev.Value) / d.Seconds()})
		}
		prev = r
		start := meter.StartReading()
		got, ok, err := meter.Next(r)
		if !ok || err != nil {
			discarded++
			continue
		}
		out = append(out, window{name + "/timed", start.At(), r.At(), got.PerSecond},
			window{name + "/timed-least", start.At(), r.At(), got.Least})
	}
}

// maxReferenceGap is the longest gap between two reference readings that a
// value is interpolated across.
const maxReferenceGap = 6 * time.Millisecond

// timeline is the reference reader's readings of the counter.
type timeline struct {
	at []time.Time
	v  []float64
}

// follow reads the counter every 2 ms from a SCHED_FIFO thread until ctx
// ends, keeping the readings whose clock interval is under 200 us.
func (tl *timeline) follow(ctx context.Context, cg *measureCgroup) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}, 0); err != nil {
		return fmt.Errorf("the reference reader needs SCHED_FIFO: %w", err)
	}
	for ctx.Err() == nil {
		r, err := cg.read()
		if err == nil && r.Width() < 200*time.Microsecond {
			tl.at, tl.v = append(tl.at, r.At()), append(tl.v, r.Value)
		}
		// a sleep of this thread's own in the kernel: woken at its FIFO
		// priority, not by the Go scheduler on a thread of normal priority
		ts := unix.NsecToTimespec(int64(2 * time.Millisecond))
		_ = unix.Nanosleep(&ts, nil)
	}
	return nil
}

// value is the counter at t, interpolated between the readings around it.
func (tl *timeline) value(t time.Time) (float64, bool) {
	i, _ := slices.BinarySearchFunc(tl.at, t, func(a, b time.Time) int { return a.Compare(b) })
	if i == 0 || i >= len(tl.at) {
		return 0, false
	}
	a, b := tl.at[i-1], tl.at[i]
	if b.Sub(a) > maxReferenceGap {
		return 0, false // the reference missed readings here: this window is not checked
	}
	f := float64(t.Sub(a)) / float64(b.Sub(a))
	return tl.v[i-1] + f*(tl.v[i]-tl.v[i-1]), true
}

// rate is the counter's rate over [from, to] by the reference.
func (tl *timeline) rate(from, to time.Time) (float64, bool) {
	a, okA := tl.value(from)
	b, okB := tl.value(to)
	if !okA || !okB || !to.After(from) {
		return 0, false
	}
	return (b - a) / to.Sub(from).Seconds(), true
}

// errorDist is a distribution of absolute errors, in cores.
type errorDist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func distOf(errs []float64) errorDist {
	abs := make([]float64, len(errs))
	for i, e := range errs {
		abs[i] = math.Abs(e)
	}
	slices.Sort(abs)
	if len(abs) == 0 {
		return errorDist{}
	}
	at := func(q float64) float64 { return abs[min(len(abs)-1, int(math.Ceil(q*float64(len(abs))))-1)] }
	return errorDist{N: len(abs), P50: at(0.5), P99: at(0.99), Max: abs[len(abs)-1]}
}

func printReadings(out *os.File, results []readingResult) {
	fmt.Fprintln(out, "\n| rate | delivered | window | method | n | p50 |err| | p99 |err| | max |err| | not rated (timing) |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		for _, w := range []string{"tick", "peek"} {
			for _, m := range []string{"untimed", "timed", "timed-least"} {
				d := r.Errors[w+"/"+m]
				discarded := ""
				if m == "timed" {
					discarded = strconv.Itoa(r.Discarded[w])
				}
				fmt.Fprintf(out, "| %.2f | %.3f | %s | %s | %d | %.3f | %.3f | %.3f | %s |\n",
					r.Rate, r.Delivered, w, m, d.N, d.P50, d.P99, d.Max, discarded)
			}
		}
	}
}

// measureCgroup is the burner's cgroup, read with the driver's own source.
type measureCgroup struct {
	dir  string
	dirs []string // every hierarchy's directory of it
	src  *usage.Cgroup
}

// read reads the cgroup's CPU counter as the driver's cgroup source does.
func (m *measureCgroup) read() (usagesource.Reading, error) { return m.src.ReadCPU() }

func (m *measureCgroup) join(pid int) error {
	for _, d := range m.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func newMeasureCgroup() (*measureCgroup, func(), error) {
	const root = "/sys/fs/cgroup"
	name := fmt.Sprintf("harvest-dev-readings-%d", os.Getpid())
	var dirs []string
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		dirs = []string{filepath.Join(root, name)}
	} else {
		dirs = []string{filepath.Join(root, "cpuacct", name), filepath.Join(root, "memory", name)}
	}
	cleanup := func() {
		for _, d := range dirs {
			os.Remove(d)
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	src, err := usage.NewCgroup(root, "/"+name, guard.Resources{CPU: 1, MemoryMiB: 1})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return &measureCgroup{dir: dirs[0], dirs: dirs, src: src}, cleanup, nil
}

// The helper processes this binary becomes when started again by itself.
const (
	helperEnv    = "HARVEST_DEV_HELPER" // "burn:<share>"
	helperBurn   = "burn:"
	burnerNice   = -20
	burstThreads = 2
)

// actAsHelperIfAsked turns this process into a burner or a busy loop when
// started as one; it never returns then.
func actAsHelperIfAsked() {
	v := os.Getenv(helperEnv)
	switch {
	case v == "":
		return
	case strings.HasPrefix(v, helperBurn):
		share, err := strconv.ParseFloat(strings.TrimPrefix(v, helperBurn), 64)
		if err == nil && share > 0 && share <= 1 {
			err = burn.Gated(share, os.Stdin, os.Stdout)
		}
		fmt.Fprintf(os.Stderr, "burner %q: %v\n", v, err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "%s=%q: unknown helper\n", helperEnv, v)
	os.Exit(2)
}

func helper(role string) *exec.Cmd {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"="+role)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// startBurners starts burners of rate cores (at most one core each) in the
// cgroup, at nice -20; stop kills them.
func startBurners(cg *measureCgroup, rate float64) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			if c.Process != nil {
				c.Process.Kill()
				c.Wait()
			}
		}
	}
	n := int(math.Ceil(rate))
	for range n {
		cmd := helper(helperBurn + strconv.FormatFloat(rate/float64(n), 'f', 4, 64))
		cmds = append(cmds, cmd)
		err := burn.StartGated(cmd, func(pid int) error {
			if err := cg.join(pid); err != nil {
				return err
			}
			return reniceAll(pid, burnerNice)
		}, 30*time.Second)
		if err != nil {
			return stop, err
		}
	}
	return stop, nil
}

// reniceAll sets every thread of pid to nice (setpriority applies to one
// thread on Linux).
func reniceAll(pid, nice int) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			return fmt.Errorf("renice thread %d of %d: %w", tid, pid, err)
		}
	}
	return nil
}

func numCPU() int { return runtime.NumCPU() }
