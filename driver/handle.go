package driver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/nomad/drivers/shared/executor"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"

	"github.com/harvest-platform/harvest/driver/guard"
)

// TaskState is what the driver keeps in Nomad's task handle to recover a
// task after a client restart.
type TaskState struct {
	ReattachConfig *pstructs.ReattachConfig
	TaskConfig     *drivers.TaskConfig
	Pid            int
	StartedAt      time.Time
	Alloc          guard.Resources
}

// taskHandle is one running task.
type taskHandle struct {
	exec         executor.Executor
	pluginClient *plugin.Client
	cfg          *drivers.TaskConfig
	pid          int
	startedAt    time.Time
	alloc        guard.Resources
	logger       hclog.Logger
	done         chan struct{}
	cancelStats  context.CancelFunc

	mu          sync.RWMutex
	state       drivers.TaskState
	completedAt time.Time
	exit        *drivers.ExitResult
	evicted     string          // the eviction reason, once evicted
	used        guard.Resources // latest measured use
}

// run waits for the process and records how it ended; an evicted task ends
// with its eviction reason as the exit error, so that it reads as an
// eviction, not a failure of the task itself.
func (h *taskHandle) run() {
	defer close(h.done)
	ps, err := h.exec.Wait(context.Background())
	h.mu.Lock()
	defer h.mu.Unlock()
	h.exit = &drivers.ExitResult{}
	h.completedAt = time.Now()
	h.state = drivers.TaskStateExited
	if err != nil {
		h.exit.Err = err
		h.state = drivers.TaskStateUnknown
	} else {
		h.exit.ExitCode, h.exit.Signal = ps.ExitCode, ps.Signal
		h.completedAt = ps.Time
	}
	if h.evicted != "" {
		h.exit.Err = errors.New(h.evicted)
	}
	if h.cancelStats != nil {
		h.cancelStats()
	}
}

// watchUsage keeps the task's latest measured use, for the guard.
func (h *taskHandle) watchUsage(ctx context.Context, interval time.Duration) {
	ch, err := h.exec.Stats(ctx, interval)
	if err != nil {
		h.logger.Debug("no task stats", "error", err)
		return
	}
	for u := range ch {
		if u == nil || u.ResourceUsage == nil {
			continue
		}
		var r guard.Resources
		if cpu := u.ResourceUsage.CpuStats; cpu != nil {
			r.CPU = cpu.Percent / 100
		}
		if mem := u.ResourceUsage.MemoryStats; mem != nil {
			r.MemoryMiB = float64(mem.RSS) / (1 << 20)
		}
		h.mu.Lock()
		h.used = r
		h.mu.Unlock()
	}
}

func (h *taskHandle) running() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.state == drivers.TaskStateRunning
}

func (h *taskHandle) status() *drivers.TaskStatus {
	h.mu.RLock()
	defer h.mu.RUnlock()
	st := &drivers.TaskStatus{
		ID: h.cfg.ID, Name: h.cfg.Name, State: h.state, StartedAt: h.startedAt, CompletedAt: h.completedAt,
		DriverAttributes: map[string]string{"pid": itoa(h.pid)},
	}
	if h.exit != nil {
		st.ExitResult = h.exit.Copy()
	}
	if h.evicted != "" {
		st.DriverAttributes["evicted"] = h.evicted
	}
	return st
}

// taskStore holds the running tasks by ID.
type taskStore struct {
	mu    sync.RWMutex
	tasks map[string]*taskHandle
}

func newTaskStore() *taskStore { return &taskStore{tasks: map[string]*taskHandle{}} }

func (s *taskStore) get(id string) (*taskHandle, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h, ok := s.tasks[id]
	return h, ok
}

func (s *taskStore) set(id string, h *taskHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks[id] = h
}

func (s *taskStore) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tasks, id)
}

// running lists the handles of running tasks.
func (s *taskStore) running() []*taskHandle {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*taskHandle
	for _, h := range s.tasks {
		if h.running() {
			out = append(out, h)
		}
	}
	return out
}
