package driver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/consul-template/signals"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/nomad/drivers/shared/executor"
	nstructs "github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/taskuser"
)

var errDisabled = errors.New("harvest driver is disabled in the client's plugin config")

func itoa(i int) string { return strconv.Itoa(i) }

// allocOf converts a task's Nomad resources to cores and MiB: reserved
// cores count whole, CPU shares (MHz) count at the node's MHz per core
// (coreMHzLocked).
func (d *Driver) allocOf(cfg *drivers.TaskConfig) guard.Resources {
	var r guard.Resources
	if cfg.Resources == nil || cfg.Resources.NomadResources == nil {
		return r
	}
	nr := cfg.Resources.NomadResources
	r.MemoryMiB = float64(nr.Memory.MemoryMB)
	d.mu.Lock()
	perCore := d.coreMHzLocked()
	d.mu.Unlock()
	switch {
	case len(nr.Cpu.ReservedCores) > 0:
		r.CPU = float64(len(nr.Cpu.ReservedCores))
	case perCore > 0:
		r.CPU = float64(nr.Cpu.CpuShares) / perCore
	}
	return r
}

// coreMHzLocked is how many MHz of Nomad's CPU unit (a task's CPU shares)
// make one core (0: not known yet). It is Nomad's own MHz per core
// (cpu.totalcompute / cpu.numcores), except where the client's
// cpu_total_compute overrides the compute Nomad fingerprinted: the override
// then stands for a node of the driver's capacity (a local cluster's client
// standing for a larger server), and a core is the override divided by the
// capacity's cores. Nomad's NumCores stays the host's there, and would make
// a task asking a core's MHz count as several cores.
func (d *Driver) coreMHzLocked() float64 {
	c := d.compute
	switch {
	case c.TotalCompute == 0:
		return 0
	case d.cpuOverride && d.settings.capacity.CPU > 0:
		return float64(c.TotalCompute) / d.settings.capacity.CPU
	case c.NumCores > 0:
		return float64(c.TotalCompute) / float64(c.NumCores)
	}
	return 0
}

// admit refuses, with a recoverable error, a task whose allocation would
// break the primary tenant's effective reserve now (so Nomad places it
// elsewhere).
// While failing safe (the primary tenant unmeasured for longer than
// stale_after) it admits nothing.
//
// Admitting holds the task's allocation until the task is tracked (release
// it with unreserve): Nomad starts a node's allocations concurrently, and
// launching the executor takes a while, so starts admitted against the
// same tracked tasks would each see the room the others take (the testbed
// saw the guard evict the surplus a moment later).
func (d *Driver) admit(cfg *drivers.TaskConfig, ask guard.Resources) error {
	d.mu.Lock()
	staleAfter, failSafe, lastGood := d.settings.policy.StaleAfter, d.failSafe, d.lastGood
	d.mu.Unlock()
	if failSafe {
		err := fmt.Errorf("harvest: the primary tenant has not been measured since %s (stale_after %s); this node admits no harvested task until it is",
			lastGood.Format(time.RFC3339), staleAfter)
		return d.refuse(cfg, refusedStale, nstructs.NewRecoverableError(err, true))
	}
	d.admitMu.Lock()
	defer d.admitMu.Unlock()
	in := d.admissionLocked()
	if err := guard.Admit(in.state, in.peak, in.hysteresis, ask); err != nil {
		return d.refuse(cfg, refusedReserve, nstructs.NewRecoverableError(err, true))
	}
	if d.starting == nil {
		d.starting, d.startingInstances = map[string]guard.Resources{}, map[string][]string{}
	}
	d.starting[cfg.ID], d.startingInstances[cfg.ID] = ask, roomInstances(cfg)
	return nil
}

// admission is the node as admission sees it.
type admission struct {
	state      guard.State
	peak       guard.Resources // the primary's peak over the admission window
	hysteresis guard.Hysteresis
}

// admissionLocked is the node as admission sees it now: the tracked tasks
// and those admitted but not tracked yet. Call with admitMu held, not mu.
func (d *Driver) admissionLocked() admission {
	d.mu.Lock()
	s, reserve := d.settings, d.reserveLocked().Resources
	primary, peak := d.primary, d.tracker.Peak()
	d.mu.Unlock()
	tasks := d.guardTasks()
	tracked := map[string]bool{}
	for _, t := range tasks {
		tracked[t.ID] = true
	}
	for id, r := range d.starting {
		if !tracked[id] { // a task both starting and tracked counts once
			tasks = append(tasks, guard.Task{ID: id, Started: time.Now(), Alloc: r})
		}
	}
	return admission{state: guard.State{Capacity: s.capacity, Reserve: reserve, Primary: primary, Tasks: tasks},
		peak: peak, hysteresis: s.hysteresis}
}

// unreserve releases the allocation admit held for a task, once the task
// is tracked or its start failed.
func (d *Driver) unreserve(id string) {
	d.admitMu.Lock()
	defer d.admitMu.Unlock()
	delete(d.starting, id)
	delete(d.startingInstances, id)
}

// refuse logs and counts a refused start and returns err.
func (d *Driver) refuse(cfg *drivers.TaskConfig, reason string, err error) error {
	d.logger.Info("refused task", "task", cfg.Name, "alloc_id", cfg.AllocID, "why", reason, "reason", err)
	d.met.refused.WithLabelValues(reason).Inc()
	return err
}

func (d *Driver) StartTask(cfg *drivers.TaskConfig) (*drivers.TaskHandle, *drivers.DriverNetwork, error) {
	d.mu.Lock()
	enabled := d.config.Enabled
	d.mu.Unlock()
	if !enabled {
		return nil, nil, errDisabled
	}
	if _, ok := d.tasks.get(cfg.ID); ok {
		return nil, nil, fmt.Errorf("task %q already started", cfg.ID)
	}
	var tc TaskConfig
	if err := cfg.DecodeDriverConfig(&tc); err != nil {
		return nil, nil, fmt.Errorf("harvest task config: %w", err)
	}
	if tc.Command == "" {
		return nil, nil, errors.New("harvest task config: command is empty")
	}
	d.mu.Lock()
	users, cg := d.settings.users, d.cgroup
	d.mu.Unlock()
	user, err := users.Resolve(cfg.User)
	if err != nil {
		return nil, nil, d.refuse(cfg, refusedUser, err)
	}
	if err := taskuser.ReachTaskDir(user, cfg.TaskDir().Dir); err != nil {
		return nil, nil, d.refuse(cfg, refusedTaskDir, err)
	}
	ask := d.allocOf(cfg)
	if err := d.admit(cfg, ask); err != nil {
		return nil, nil, err
	}
	defer d.unreserve(cfg.ID) // by then tracked, or never started

	logger := d.logger.With("task", cfg.Name, "alloc_id", cfg.AllocID)
	exec, client, err := executor.CreateExecutor(logger, d.nomadConfig, &executor.ExecutorConfig{
		LogFile: filepath.Join(cfg.TaskDir().Dir, "executor.out"), LogLevel: "info", Compute: d.compute,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("harvest: start executor: %w", err)
	}
	cmd := &executor.ExecCommand{
		Cmd: tc.Command, Args: tc.Args, Env: cfg.EnvList(), User: user, TaskDir: cfg.TaskDir().Dir,
		StdoutPath: cfg.StdoutPath, StderrPath: cfg.StderrPath, Resources: cfg.Resources.Copy(),
		NetworkIsolation: cfg.NetworkIsolation,
	}
	if err := prepareCgroup(cg, cfg, cmd); err != nil {
		client.Kill()
		return nil, nil, d.refuse(cfg, refusedCgroup, fmt.Errorf("harvest: task cgroup: %w", err))
	}
	ps, err := exec.Launch(cmd)
	if err != nil {
		client.Kill()
		releaseCgroup(cg, cfg, logger)
		return nil, nil, fmt.Errorf("harvest: launch %s: %w", tc.Command, err)
	}
	if err := adoptCgroup(cg, cfg, ps.Pid); err != nil {
		// never left running at Nomad's weight beside the primary tenant
		_ = exec.Shutdown("SIGKILL", 0)
		client.Kill()
		releaseCgroup(cg, cfg, logger)
		return nil, nil, d.refuse(cfg, refusedCgroup, fmt.Errorf("harvest: move the task into the harvest cgroup: %w", err))
	}
	h := d.track(cfg, exec, client, ps.Pid, time.Now().Round(time.Millisecond), ask)
	handle := drivers.NewTaskHandle(taskHandleVersion)
	handle.Config = cfg
	if err := handle.SetDriverState(&TaskState{
		ReattachConfig: pstructs.ReattachConfigFromGoPlugin(client.ReattachConfig()),
		TaskConfig:     cfg, Pid: ps.Pid, StartedAt: h.startedAt, Alloc: ask,
	}); err != nil {
		_ = exec.Shutdown("", 0)
		client.Kill()
		d.tasks.remove(cfg.ID)
		return nil, nil, fmt.Errorf("harvest: save task state: %w", err)
	}
	logger.Info("started task", "pid", ps.Pid, "user", user, "alloc_cores", ask.CPU, "alloc_mib", ask.MemoryMiB)
	return handle, nil, nil
}

// track registers a launched (or recovered) task and starts watching it.
func (d *Driver) track(cfg *drivers.TaskConfig, exec executor.Executor, client *plugin.Client, pid int, started time.Time, alloc guard.Resources) *taskHandle {
	ctx, cancel := context.WithCancel(d.ctx)
	h := &taskHandle{exec: exec, pluginClient: client, cfg: cfg, pid: pid, startedAt: started, alloc: alloc,
		logger: d.logger.With("task", cfg.Name, "alloc_id", cfg.AllocID), done: make(chan struct{}),
		cancelStats: cancel, state: drivers.TaskStateRunning}
	d.tasks.set(cfg.ID, h)
	go h.run()
	d.mu.Lock()
	interval := d.settings.interval
	d.mu.Unlock()
	go h.watchUsage(ctx, max(interval, time.Second))
	return h
}

// RecoverTask reattaches to a task's executor after a client restart.
func (d *Driver) RecoverTask(handle *drivers.TaskHandle) error {
	if handle == nil {
		return errors.New("harvest: nil task handle")
	}
	if _, ok := d.tasks.get(handle.Config.ID); ok {
		return nil
	}
	var st TaskState
	if err := handle.GetDriverState(&st); err != nil {
		return fmt.Errorf("harvest: decode task state: %w", err)
	}
	rc, err := pstructs.ReattachConfigToGoPlugin(st.ReattachConfig)
	if err != nil {
		return fmt.Errorf("harvest: reattach config: %w", err)
	}
	exec, client, err := executor.ReattachToExecutor(rc, d.logger.With("task", handle.Config.Name), d.compute)
	if err != nil {
		return fmt.Errorf("harvest: reattach to executor: %w", err)
	}
	d.track(st.TaskConfig, exec, client, st.Pid, st.StartedAt, st.Alloc)
	d.logger.Info("recovered task", "task", handle.Config.Name, "alloc_id", handle.Config.AllocID, "pid", st.Pid)
	return nil
}

func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	ch := make(chan *drivers.ExitResult, 1)
	go func() {
		defer close(ch)
		select {
		case <-h.done:
		case <-ctx.Done():
			ch <- &drivers.ExitResult{Err: ctx.Err()}
			return
		case <-d.ctx.Done():
			ch <- &drivers.ExitResult{Err: d.ctx.Err()}
			return
		}
		h.mu.RLock()
		res := h.exit.Copy()
		h.mu.RUnlock()
		ch <- res
	}()
	return ch, nil
}

// StopTask sends the job's kill signal, waits up to timeout, then kills.
func (d *Driver) StopTask(taskID string, timeout time.Duration, signal string) error {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	if err := h.exec.Shutdown(signal, timeout); err != nil {
		if h.pluginClient.Exited() {
			return nil
		}
		return fmt.Errorf("harvest: stop task: %w", err)
	}
	<-h.done
	h.pluginClient.Kill()
	return nil
}

func (d *Driver) DestroyTask(taskID string, force bool) error {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	if h.running() && !force {
		return errors.New("harvest: cannot destroy a running task")
	}
	if !h.pluginClient.Exited() {
		if err := h.exec.Shutdown("", 0); err != nil {
			h.logger.Warn("executor shutdown failed", "error", err)
		}
		h.pluginClient.Kill()
	}
	d.tasks.remove(taskID)
	releaseCgroup(d.harvestCgroup(), h.cfg, h.logger)
	return nil
}

func (d *Driver) InspectTask(taskID string) (*drivers.TaskStatus, error) {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	return h.status(), nil
}

// TaskStats streams the task's CPU and memory from its cgroup.
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	return h.exec.Stats(ctx, interval)
}

func (d *Driver) SignalTask(taskID string, signal string) error {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	sig, ok := signals.SignalLookup[signal]
	if !ok {
		return fmt.Errorf("harvest: unknown signal %q", signal)
	}
	return h.exec.Signal(sig)
}

func (d *Driver) ExecTask(taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	if len(cmd) == 0 {
		return nil, errors.New("harvest: exec needs a command")
	}
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	out, code, err := h.exec.Exec(time.Now().Add(timeout), cmd[0], cmd[1:])
	if err != nil {
		return nil, err
	}
	return &drivers.ExecTaskResult{Stdout: out, ExitResult: &drivers.ExitResult{ExitCode: code}}, nil
}

var _ drivers.ExecTaskStreamingRawDriver = (*Driver)(nil)

// ExecTaskStreamingRaw serves `nomad alloc exec` through the task's executor.
func (d *Driver) ExecTaskStreamingRaw(ctx context.Context, taskID string, command []string, tty bool, stream drivers.ExecTaskStream) error {
	if len(command) == 0 {
		return errors.New("harvest: exec needs a command")
	}
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	return h.exec.ExecStreaming(ctx, command, tty, stream)
}
