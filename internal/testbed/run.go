package testbed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/internal/proc"
	"github.com/harvest-platform/harvest/internal/testbed/daemonlogs"
)

// Run starts the cluster, runs the span under c.Policy and returns its
// report (also written to c.Out/report.json). The cluster is stopped
// whatever happens.
func Run(ctx context.Context, c Config) (*Report, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	// the placer and the blob front run in c.Out and read their configs
	// by these paths: a relative -out would name c.Out/c.Out/...
	var err error
	if c.Out, err = filepath.Abs(c.Out); err != nil {
		return nil, err
	}
	if c.Logger == nil {
		c.Logger = hclog.New(&hclog.LoggerOptions{Name: "testbed"})
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	for _, dir := range []string{c.Out, filepath.Join(c.Out, "jobs")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	started := time.Now() // this run's: the run folder's logs keep earlier runs' lines
	began := time.Now().Add(c.Setup).Truncate(time.Second)
	spanStart := time.Now().UTC().Truncate(history.Slot)
	ps, err := c.primaries(spanStart)
	if err != nil {
		return nil, err
	}
	simCfg := c.simConfig(ps)
	stream, scale, err := c.stream(simCfg)
	if err != nil {
		return nil, err
	}
	traceCSV, historyCSV := filepath.Join(c.Out, "primaries.csv"), filepath.Join(c.Out, "history.csv")
	end := spanStart.Add(time.Duration(len(ps[0].Series.Values)) * history.Slot)
	if err := writeLong(traceCSV, ps, end); err != nil {
		return nil, err
	}
	if err := writeLong(historyCSV, ps, spanStart); err != nil {
		return nil, err
	}
	fmt.Fprintf(c.Progress, "testbed: %s, seed %d: %d clients of %d cores (%g reserved), %d jobs over %g trace hours at x%g (job scale %.3f); span starts at %s\n",
		c.Policy, c.Seed, c.Clients, c.NodeCores, c.ReserveCores, len(stream), c.TraceHours, c.Speedup, scale, began.Format(time.TimeOnly))

	nodes := make([]localcluster.NodeSpec, len(ps))
	for i, p := range ps {
		nodes[i] = localcluster.NodeSpec{Name: fmt.Sprintf("client-%d", i+1), Tenant: p.ID.String(), Environment: p.ID.Environment,
			Rack: fmt.Sprintf("rack-%d", i%3+1)}
	}
	roomDevice := ""
	if c.RoomDevice {
		roomDevice = filepath.Join(c.Bin, contract.RoomDevicePlugin)
	}
	st, err := localcluster.Up(ctx, localcluster.Options{
		RoomDevice: roomDevice,
		RunDir:     c.RunDir, StackBin: c.StackBin, Logger: c.Logger.Named("cluster"),
		DriverBinary: filepath.Join(c.Bin, "harvest-driver"), UsagePlugin: filepath.Join(c.Bin, "harvest-usage-prometheus"),
		DevTool: filepath.Join(c.Bin, "harvest-dev"), Nodes: nodes, NodeCores: c.NodeCores, ReserveCores: c.ReserveCores,
		Replay: &localcluster.ReplayOptions{File: traceCSV, Start: spanStart, Speedup: c.Speedup, Began: began},
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	defer func() {
		if err := localcluster.Down(context.Background(), st, c.Logger.Named("cluster")); err != nil {
			c.Logger.Error("stopping the cluster", "error", err)
		}
	}()
	nomad, err := st.NomadClient()
	if err != nil {
		return nil, err
	}
	if err := setSchedulerAlgorithm(nomad, c.SchedulerAlgorithm); err != nil {
		return nil, err
	}
	if err := importHistory(ctx, c, st, historyCSV); err != nil {
		return nil, err
	}
	pl, err := startPlacer(ctx, c, st)
	if err != nil {
		return nil, err
	}
	defer pl.stop()
	labels, err := label(ctx, c, st, pl, nomad)
	if err != nil {
		return nil, err
	}
	mhz, err := mhzPerCore(nomad, c.NodeCores)
	if err != nil {
		return nil, err
	}
	spec := jobSpec{Policy: c.Policy, MHzPerCore: mhz, Speedup: c.Speedup, Bounded: c.BoundedReschedule}
	var rp *realPrimary
	if c.RealPrimary {
		if rp, err = startRealPrimary(ctx, c, st, nodes[0]); err != nil {
			return nil, err
		}
		defer rp.stop()
		spec.Burn = &taskBurn{Node: rp.node, CPU: rp.cpu, Share: 1 / float64(c.NodeCores), Tool: filepath.Join(c.Bin, "harvest-dev")}
		fmt.Fprintf(c.Progress, "testbed: the real primary on %s (tenant %s) serves on %s, pinned to CPU %d\n", rp.node, rp.tenant, rp.addr, rp.cpu)
	}
	var blob *blobTier
	if c.BlobObjects > 0 {
		if blob, err = startBlob(ctx, c, st, nodes); err != nil {
			return nil, err
		}
		defer blob.stop()
		if err := blob.seed(ctx, c.BlobObjects, c.BlobObjectKB<<10); err != nil {
			return nil, err
		}
		spec.Reads = &taskReads{Endpoint: "http://" + blob.addr, AccessKey: blob.accessKey, SecretKey: blob.secretKey, Objects: c.BlobObjects}
		fmt.Fprintf(c.Progress, "testbed: harvest-blob holds %d objects of %d KiB the tasks read\n", c.BlobObjects, c.BlobObjectKB)
	}
	if wait := time.Until(began); wait < 0 {
		return nil, fmt.Errorf("setting up took %s longer than the %s allowed (-setup)", -wait, c.Setup)
	} else {
		fmt.Fprintf(c.Progress, "testbed: set up; the span starts in %s\n", wait.Round(time.Second))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}

	busyBefore, busyErr := proc.HostBusySeconds()
	roles := map[string]int{"placer": pl.proc.PID}
	if blob != nil {
		roles["blob front"] = blob.proc.PID
	}
	daemons := daemonPIDs(st, roles)
	cpuBefore, measuredFrom := onCPUSeconds(daemons), time.Now()
	var blobBefore map[string]float64
	if blob != nil {
		if blobBefore, err = blob.counters(ctx); err != nil {
			return nil, err
		}
	}
	prefix := fmt.Sprintf("tb-%s-%d-", c.Policy, c.Seed)
	w := newWatcher(nomad, prefix)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.run(wctx)
	spanEnd := began.Add(c.wall(c.TraceHours * 3600))
	trace, err := st.Replay.Trace() // what the exporter replays: the real primary's load, the breaches
	if err != nil {
		return nil, err
	}
	measured := make(chan *RealPrimaryReport, 1)
	if rp != nil {
		go func() { measured <- rp.measure(wctx, trace, float64(c.NodeCores), c.Speedup, began, spanEnd) }()
	} else {
		measured <- nil
	}
	jobs := make([]*job, len(stream))
	var wg sync.WaitGroup
	var mu sync.Mutex
	nextReport := time.Now()
	for i, sj := range stream {
		j := &job{ID: prefix + fmt.Sprintf("%05d", i+1), StreamJob: sj}
		jobs[i] = j
		at := began.Add(c.wall(sj.At))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Until(at)):
		}
		if time.Now().After(nextReport) {
			fmt.Fprintf(c.Progress, "testbed: %.0f%% of the span, %d of %d jobs submitted\n", 100*sj.At/(c.TraceHours*3600), i, len(stream))
			nextReport = time.Now().Add(time.Minute)
		}
		j.Submitted = time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := submit(ctx, filepath.Join(st.StackBin, "nomad"), pl.proxyAddr, filepath.Join(c.Out, "jobs"), j, jobHCL(j, spec.forJob(i)))
			if err != nil {
				mu.Lock()
				j.SubmitErr = err.Error()
				mu.Unlock()
				c.Logger.Error("submitting", "job", j.ID, "error", err)
			}
		}()
	}
	wg.Wait()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Until(spanEnd)):
	}
	realReport := <-measured
	fmt.Fprintf(c.Progress, "testbed: span over; waiting up to %s for the jobs still running\n", c.Drain)
	for deadline := time.Now().Add(c.Drain); time.Now().Before(deadline); time.Sleep(5 * time.Second) {
		allocs, _ := w.snapshot()
		if len(unfinished(jobs, allocs)) == 0 || ctx.Err() != nil {
			break
		}
	}
	stopWatch()
	if err := w.poll(); err != nil {
		c.Logger.Warn("reading the allocations a last time", "error", err)
	}
	allocs, watchErrs := w.snapshot()
	tenantOf := map[string]string{}
	for _, n := range nodes {
		tenantOf[n.Name] = n.Tenant
	}
	primaryOf := func(node string, wall time.Time) (float64, bool) {
		tenant, ok := tenantOf[node]
		return trace.Cores(tenant, wall, float64(c.NodeCores)), ok
	}
	rep := c.report(jobs, allocs, primaryOf, spanStart, began, time.Now(), scale)
	rep.WatchErrors, rep.Labels, rep.RealPrimary = watchErrs, labels, realReport
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	rep.Utilisation = utilisation(allocs, primaryOf, names, float64(c.NodeCores), began, time.Now(), c.wall(utilisationWindow), c.Speedup)
	if busyAfter, err := proc.HostBusySeconds(); err == nil && busyErr == nil && len(allocs) > 0 {
		rep.Allocations, rep.HostBusySeconds = len(allocs), busyAfter-busyBefore
		rep.HostCPUPerAllocation = rep.HostBusySeconds / float64(len(allocs))
	}
	logs := append(logFiles(st), pl.log)
	if blob != nil {
		rep.Blob = &BlobReport{}
		if after, err := blob.counters(ctx); err != nil {
			c.Logger.Error("reading the blob front's counters", "error", err)
		} else {
			readCounts(rep.Blob, blobBefore, after)
		}
		blob.verify(ctx, rep.Blob)
		logs = append(logs, blob.log)
	}
	rep.DaemonErrorLines = daemonlogs.ErrorLines(logs, started)
	if c.Policy == H {
		rep.Escalations = daemonlogs.Escalations(pl.log, started)
	}
	rep.UnfinishedJobs = unfinishedJobs(nomad, unfinished(jobs, allocs))
	if rep.Evaluations, err = evaluationsByTrigger(nomad); err != nil {
		c.Logger.Error("counting Nomad's evaluations", "error", err)
	}
	rep.DaemonCPUSeconds = map[string]float64{}
	total := 0.0
	for role, after := range onCPUSeconds(daemons) {
		rep.DaemonCPUSeconds[role] = after - cpuBefore[role]
		total += after - cpuBefore[role]
	}
	rep.DaemonCores = total / time.Since(measuredFrom).Seconds()
	if c.Policy != None {
		release := 0.0
		if rep.StageTimes != nil {
			release = rep.StageTimes.Release.Mean
		}
		rep.Simulator, rep.SimulatorWithDelay, rep.SimulatorWithStageDelay = predict(simCfg, rep.StartDelay.P50*c.Speedup, release, c.Logger)
	}
	return rep, writeReport(c.Out, rep, allocs)
}

// unfinished are the submitted jobs not finished by their allocations.
func unfinished(jobs []*job, allocs []alloc) []*job {
	by := ofJob(allocs)
	var out []*job
	for _, j := range jobs {
		if j == nil || j.SubmitErr != "" {
			continue
		}
		if _, ok := jobOutcome(j, by[j.ID]); !ok {
			out = append(out, j)
		}
	}
	return out
}

// setSchedulerAlgorithm sets Nomad's scheduler algorithm, keeping the rest
// of its scheduler configuration ("" leaves it as it is).
func setSchedulerAlgorithm(nomad *nomadapi.Client, algorithm string) error {
	if algorithm == "" {
		return nil
	}
	cur, _, err := nomad.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return fmt.Errorf("nomad's scheduler configuration: %w", err)
	}
	cfg := cur.SchedulerConfig
	cfg.SchedulerAlgorithm = nomadapi.SchedulerAlgorithm(algorithm)
	if _, _, err := nomad.Operator().SchedulerSetConfiguration(cfg, nil); err != nil {
		return fmt.Errorf("setting nomad's scheduler algorithm to %s: %w", algorithm, err)
	}
	return nil
}

// evaluationsByTrigger counts Nomad's evaluations by what triggered them
// ("job-register", "node-update", "alloc-failure", ...): the scheduler's
// work the run caused. Nomad collects terminal evaluations older than its
// eval_gc_threshold (an hour by default), so a longer run undercounts.
func evaluationsByTrigger(nomad *nomadapi.Client) (map[string]int, error) {
	evals, _, err := nomad.Evaluations().List(nil)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range evals {
		out[e.TriggeredBy]++
	}
	return out, nil
}

// mhzPerCore is the Nomad CPU shares of one core of a client: its total
// compute (cpu_total_compute) over its NodeCores.
func mhzPerCore(nomad *nomadapi.Client, cores int) (int, error) {
	nodes, _, err := nomad.Nodes().List(nil)
	if err != nil || len(nodes) == 0 {
		return 0, fmt.Errorf("reading the clients' compute: %v (%d nodes)", err, len(nodes))
	}
	n, _, err := nomad.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		return 0, err
	}
	total, err := strconv.Atoi(n.Attributes["cpu.totalcompute"])
	if err != nil || total < cores {
		return 0, fmt.Errorf("client %s: cpu.totalcompute %q", n.Name, n.Attributes["cpu.totalcompute"])
	}
	return total / cores, nil
}

// writeReport writes the report, and the allocations it was counted from
// (allocations.json: Nomad's state is gone with the cluster, and a new
// figure can be computed again from them).
func writeReport(dir string, rep *Report, allocs []alloc) error {
	for name, v := range map[string]any{"report.json": rep, "allocations.json": allocs} {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
