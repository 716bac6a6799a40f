package testbed

// The real primary (Config.RealPrimary), for Figure 10 (Section 6: the
// primaries' p99 per minute under each policy and with no harvesting). The
// first client's primary is a latency-critical service that burns real CPU:
// the stand-in (internal/standin, every request 2 ms of CPU), pinned to one
// of the host's CPUs, which stands for the client's NodeCores cores. Its load
// follows the client's tenant in the trace: rate(t) = cores(t) / NodeCores /
// 2 ms requests a second, so the stand-in uses the share of its CPU that the
// tenant uses of its server. The harvested tasks that land on that client
// burn one NodeCores-th of the same CPU each while they run (harvest-dev
// burn), so the CPU holds, scaled down, what the server would. The driver
// still reads the replayed trace for the client (the exporter serves it), as
// it does for every client: the stand-in burns what the trace says.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/internal/proc"
	"github.com/harvest-platform/harvest/internal/replay"
	"github.com/harvest-platform/harvest/internal/standin"
)

// RealPrimaryReport is the real primary's part of a run: its requests'
// latency per wall minute from the span's start, and the scheduler's own
// account of its waits, the figure this shared host cannot blur by being
// slow (a wait for a CPU is a wait whatever the CPU's speed).
type RealPrimaryReport struct {
	Node   string `json:"node"`
	Tenant string `json:"tenant"`
	// CPU is the host CPU the stand-in and the harvested tasks on Node are
	// pinned to; it stands for Node's NodeCores cores.
	CPU     int              `json:"cpu"`
	Minutes []standin.Minute `json:"minutes"`
	// P99PerMinute summarises the minutes' p99 latencies (ms): Figure 10's
	// line as one distribution.
	P99PerMinute Summary `json:"p99_per_minute_ms"`
	Requests     int     `json:"requests"`
	Failed       int     `json:"failed"`
	// WaitPerCPUSecond is the stand-in's time runnable but waiting for a
	// CPU per second it spent on one (/proc/PID/task/*/schedstat), over
	// the span.
	WaitPerCPUSecond float64 `json:"wait_per_cpu_second"`
	// HandlerWaitP99PerMinute and OutsideHandlerP99PerMinute split the
	// latency's tail (ms; absent in runs before them): the minutes' p99 of
	// each request's wait for a CPU inside its handler (the handler's thread's
	// schedstat), and of its time outside the handler (latency minus the
	// handler's wall time: the send, the accept, the goroutine's start, the
	// answer), each a distribution over the minutes.
	HandlerWaitP99PerMinute    *Summary `json:"handler_wait_p99_per_minute_ms,omitempty"`
	OutsideHandlerP99PerMinute *Summary `json:"outside_handler_p99_per_minute_ms,omitempty"`
	// DriverLateP99PerMinute is the p99 per minute of the load's own
	// lateness (standin.Reply.Late): the testbed drives the stand-in from
	// its own process, on the daemons' CPU, so a busy control plane delays
	// the sending, and the latency counts from the due time. This part is
	// the measuring side's, not the primary's.
	DriverLateP99PerMinute *Summary `json:"driver_late_p99_per_minute_ms,omitempty"`
	// Load says where the load ran when not in the testbed's process
	// (Config.RealtimeLoad: "SCHED_FIFO on CPUs 0").
	Load string `json:"load,omitempty"`
	// LoadError is why the load process failed, if it did.
	LoadError string `json:"load_error,omitempty"`
}

// realPrimary is the running stand-in.
type realPrimary struct {
	cmd          *exec.Cmd
	addr         string
	node, tenant string
	cpu          int
	// load runs the load from a process of its own (Config.RealtimeLoad;
	// nil: from this one), loadCPUs its CPUs, loadLog its diagnostics.
	load              []string
	loadCPUs, loadLog string
}

// startRealPrimary starts the stand-in pinned to c.RealPrimaryCPU on a
// listener opened here (so no other process can take its port), joins it
// to node's primary cgroup and waits until it answers.
func startRealPrimary(ctx context.Context, c Config, st *localcluster.State, node localcluster.NodeSpec) (*realPrimary, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	logFile, err := os.Create(filepath.Join(c.Out, "standin.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	p := &realPrimary{addr: l.Addr().String(), node: node.Name, tenant: node.Tenant, cpu: c.RealPrimaryCPU}
	if c.RealtimeLoad {
		if err := standin.CheckRealtime(); err != nil {
			return nil, err
		}
		p.loadCPUs, p.loadLog = c.loadCPUs(), filepath.Join(c.Out, "standin-load.log")
		p.load = standin.RealtimeLoad(filepath.Join(c.Bin, "harvest-dev"), p.loadCPUs)
	}
	p.cmd = exec.Command("taskset", "-c", strconv.Itoa(p.cpu), filepath.Join(c.Bin, "harvest-dev"), "standin", "-inherited")
	p.cmd.ExtraFiles = []*os.File{f}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("the real primary: %w", err)
	}
	if err := st.JoinPrimary(node.Name, p.cmd.Process.Pid); err != nil {
		p.stop()
		return nil, fmt.Errorf("the real primary into %s's primary cgroup: %w", node.Name, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			return p, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return nil, fmt.Errorf("the real primary did not answer on %s: %v (log %s)", p.addr, err, logFile.Name())
		}
	}
}

func (p *realPrimary) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// rateAt is the stand-in's load at wall time t: the requests a second that
// make it use the tenant's share of its server (trace cores over
// nodeCores) of one CPU.
func rateAt(trace *replay.Trace, tenant string, nodeCores float64) func(time.Time) float64 {
	perRequest := standin.RequestCPU.Seconds()
	return func(t time.Time) float64 {
		return trace.Cores(tenant, t, nodeCores) / nodeCores / perRequest
	}
}

// measure drives the stand-in from began to end at its tenant's rate and
// returns its report.
func (p *realPrimary) measure(ctx context.Context, trace *replay.Trace, nodeCores, speedup float64, began, end time.Time) *RealPrimaryReport {
	log := standin.NewMinutes(began)
	minutes := int(end.Sub(began) / time.Minute)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; k <= minutes; k++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(began.Add(time.Duration(k) * time.Minute))):
			}
			on, wait := proc.Schedstat(p.cmd.Process.Pid)
			log.Sched(k, on, wait)
		}
	}()
	rep := &RealPrimaryReport{Node: p.node, Tenant: p.tenant, CPU: p.cpu}
	rate, span := rateAt(trace, p.tenant, nodeCores), end.Sub(began)
	if p.load == nil {
		standin.Drive(ctx, p.addr, began, span, rate, log.Record)
	} else if f, err := os.Create(p.loadLog); err != nil {
		rep.LoadError = err.Error()
	} else {
		// the rate sampled every 100 ms (a trace slot lasts 120/S s wall: 10 s at x12)
		rep.Load = "SCHED_FIFO on CPUs " + p.loadCPUs
		if err := standin.DriveFrom(ctx, p.load, p.addr, standin.SampleSchedule(rate, began, span, 100*time.Millisecond), log.Record, f); err != nil {
			rep.LoadError = err.Error()
		}
		f.Close()
	}
	wg.Wait()
	rep.Minutes = log.Report(minutes, speedup)
	var p99s, waits, outside, late []float64
	var on, wait float64
	for _, m := range rep.Minutes {
		rep.Requests += m.Requests
		rep.Failed += m.Failed
		on, wait = on+m.OnCPUSeconds, wait+m.WaitSeconds
		if m.Requests > m.Failed {
			p99s, late = append(p99s, m.P99ms), append(late, m.P99DriverLateMs)
		}
		if m.Accounted > 0 {
			waits, outside = append(waits, m.P99HandlerWaitMs), append(outside, m.P99OutsideHandlerMs)
		}
	}
	rep.P99PerMinute = summarize(p99s)
	w, o, l := summarize(waits), summarize(outside), summarize(late)
	rep.HandlerWaitP99PerMinute, rep.OutsideHandlerP99PerMinute, rep.DriverLateP99PerMinute = &w, &o, &l
	if on > 0 {
		rep.WaitPerCPUSecond = wait / on
	}
	return rep
}
