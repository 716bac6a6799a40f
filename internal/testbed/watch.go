package testbed

import (
	"context"
	"strings"
	"sync"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
)

// alloc is what the testbed keeps of one allocation of a stream job.
type alloc struct {
	ID         string    `json:"id"`
	Job        string    `json:"job"`
	Group      string    `json:"group"`
	Name       string    `json:"name"`
	Node       string    `json:"node"`
	Status     string    `json:"status"` // Nomad's client status, last seen
	Created    time.Time `json:"created"`
	Started    time.Time `json:"started"`               // the task's, zero until known
	Finished   time.Time `json:"finished"`              // the task's, zero until known
	Evicted    bool      `json:"evicted,omitempty"`     // the harvest driver killed it for the primary
	KillReason string    `json:"kill_reason,omitempty"` // cpu, memory or stale (the driver's reason)
	Refused    bool      `json:"refused,omitempty"`     // the harvest driver refused its start (the reserve)
	// Replaced: Nomad rescheduled it (or plans to); a failed allocation
	// not replaced is work Nomad gave up on.
	Replaced bool   `json:"replaced,omitempty"`
	Events   string `json:"events,omitempty"`
}

// watcher keeps the allocations of the stream's jobs (every job whose ID
// starts with prefix), polling Nomad's allocation list with blocking
// queries.
type watcher struct {
	client *nomadapi.Client
	prefix string

	mu     sync.Mutex
	allocs map[string]*alloc
	errs   int
}

func newWatcher(client *nomadapi.Client, prefix string) *watcher {
	return &watcher{client: client, prefix: prefix, allocs: map[string]*alloc{}}
}

// run polls until ctx ends.
func (w *watcher) run(ctx context.Context) {
	var index uint64
	answered := false
	for ctx.Err() == nil {
		q := (&nomadapi.QueryOptions{WaitIndex: cluster.BlockingIndex(index, answered), WaitTime: 5 * time.Second}).WithContext(ctx)
		list, meta, err := w.client.Allocations().List(q)
		if err != nil && ctx.Err() != nil {
			return // stopped, not an error
		}
		if err != nil {
			w.mu.Lock()
			w.errs++
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		index, answered = meta.LastIndex, true
		w.update(list)
	}
}

// poll reads the list once (at the end of a run).
func (w *watcher) poll() error {
	list, _, err := w.client.Allocations().List(nil)
	if err == nil {
		w.update(list)
	}
	return err
}

func (w *watcher) update(list []*nomadapi.AllocationListStub) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range list {
		if !strings.HasPrefix(s.JobID, w.prefix) {
			continue
		}
		a := w.allocs[s.ID]
		if a == nil {
			a = &alloc{ID: s.ID, Job: s.JobID, Group: s.TaskGroup, Name: s.Name, Node: s.NodeName, Created: time.Unix(0, s.CreateTime)}
			w.allocs[s.ID] = a
		}
		a.Status = s.ClientStatus
		a.Replaced = s.NextAllocation != "" || s.FollowupEvalID != ""
		for _, ts := range s.TaskStates {
			if !ts.StartedAt.IsZero() {
				a.Started = ts.StartedAt
			}
			if !ts.FinishedAt.IsZero() {
				a.Finished = ts.FinishedAt
			}
			var ev []string
			for _, e := range ts.Events {
				msg := e.DisplayMessage
				if msg == "" {
					msg = e.Type
				}
				ev = append(ev, msg)
				for _, m := range []string{e.DisplayMessage, e.Message, e.DriverMessage, e.DriverError} {
					if strings.Contains(m, contract.EvictionPrefix) {
						a.Evicted, a.KillReason = true, killReason(m)
					}
					a.Refused = a.Refused || strings.Contains(m, contract.RefusalPrefix)
				}
			}
			a.Events = strings.Join(ev, "; ")
		}
	}
}

// snapshot copies the allocations kept.
func (w *watcher) snapshot() ([]alloc, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]alloc, 0, len(w.allocs))
	for _, a := range w.allocs {
		out = append(out, *a)
	}
	return out, w.errs
}

// killReason reads the driver's reason from its eviction message
// (guard.Plan.EvictionMessage).
func killReason(msg string) string {
	switch {
	case strings.Contains(msg, "has not been measured"):
		return "stale"
	case strings.Contains(msg, "memory reserve"):
		return "memory"
	}
	return "cpu"
}
