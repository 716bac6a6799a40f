package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// health is one job's standing: its current version's running allocations
// and how many of them pass every Consul check of their services.
type health struct {
	want, running, passing int
	lastEvent              string
	// fingerprint changes when an allocation is replaced or a task restarts
	fingerprint string
}

func (h health) ok() bool { return h.want > 0 && h.running >= h.want && h.passing >= h.running }

func (h health) String() string {
	s := fmt.Sprintf("%d of %d allocations running, %d passing their Consul checks", h.running, h.want, h.passing)
	if h.lastEvent != "" {
		s += "; last task event: " + h.lastEvent
	}
	return s
}

// settle is how long a job must stay healthy, with the same allocations
// and no task restart, before the next one is brought up: the front's
// storage-node list is a template over Consul, re-rendered (and the task
// restarted) up to ~10 s after the storage nodes change.
const settle = 12 * time.Second

// waitHealthy waits until the job's current version is fully running, every
// running allocation passes all its service checks in Consul, and that has
// held for settle.
func (d *deployer) waitHealthy(ctx context.Context, name string) error {
	var last health
	var since time.Time
	for {
		h, err := d.health(ctx, name)
		switch {
		case err != nil || !h.ok():
			since = time.Time{}
		case since.IsZero() || h.fingerprint != last.fingerprint:
			since = time.Now()
		case time.Since(since) >= d.settle:
			return nil
		}
		if err == nil {
			last = h
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%s not healthy: %w (%v)", name, err, ctx.Err())
			}
			return fmt.Errorf("%s not healthy: %s (%v)", name, last, ctx.Err())
		case <-time.After(d.poll):
		}
	}
}

func (d *deployer) health(ctx context.Context, name string) (health, error) {
	q := (&nomadapi.QueryOptions{}).WithContext(ctx)
	job, _, err := d.nomad.Jobs().Info(name, q)
	if err != nil {
		return health{}, err
	}
	summary, _, err := d.nomad.Jobs().Summary(name, q)
	if err != nil {
		return health{}, err
	}
	allocs, _, err := d.nomad.Jobs().Allocations(name, false, q)
	if err != nil {
		return health{}, err
	}
	var h health
	services := map[string]int{} // task group -> services with checks
	for _, tg := range job.TaskGroups {
		services[*tg.Name] = len(tg.Services)
		if *job.Type != nomadapi.JobTypeSystem {
			h.want += *tg.Count
		}
	}
	if *job.Type == nomadapi.JobTypeSystem {
		// a system job wants one allocation per eligible node: those running,
		// starting or still queued
		for _, tg := range summary.Summary {
			h.want += tg.Running + tg.Starting + tg.Queued
		}
	}
	passing, err := d.passingByAlloc(job)
	if err != nil {
		return health{}, err
	}
	var parts []string
	for _, a := range allocs {
		if a.JobVersion != *job.Version || a.DesiredStatus != nomadapi.AllocDesiredStatusRun {
			continue
		}
		h.lastEvent = lastTaskEvent(a)
		if a.ClientStatus != nomadapi.AllocClientStatusRunning {
			continue
		}
		h.running++
		parts = append(parts, a.ID+restarts(a))
		if passing[a.ID] >= services[a.TaskGroup] {
			h.passing++
		}
	}
	sort.Strings(parts)
	h.fingerprint = strings.Join(parts, ";")
	return h, nil
}

// passingByAlloc counts, per allocation, the job's services that pass every
// check in Consul (Nomad names a service instance _nomad-task-<alloc id>-...).
func (d *deployer) passingByAlloc(job *nomadapi.Job) (map[string]int, error) {
	out := map[string]int{}
	seen := map[string]bool{}
	for _, tg := range job.TaskGroups {
		for _, s := range tg.Services {
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			entries, _, err := d.consul.Health().Service(s.Name, "", true, nil)
			if err != nil {
				return nil, fmt.Errorf("consul: service %s: %w", s.Name, err)
			}
			for _, e := range entries {
				id := strings.TrimPrefix(e.Service.ID, "_nomad-task-")
				if len(id) >= 36 {
					out[id[:36]]++
				}
			}
		}
	}
	return out, nil
}

func restarts(a *nomadapi.AllocationListStub) string {
	var n uint64
	for _, ts := range a.TaskStates {
		n += ts.Restarts
	}
	return fmt.Sprintf("/%d", n)
}

func lastTaskEvent(a *nomadapi.AllocationListStub) string {
	var last *nomadapi.TaskEvent
	for _, ts := range a.TaskStates {
		for _, e := range ts.Events {
			if last == nil || e.Time > last.Time {
				last = e
			}
		}
	}
	if last == nil {
		return ""
	}
	msg := last.DisplayMessage
	if msg == "" {
		msg = last.Message
	}
	return strings.TrimSpace(last.Type + " " + msg)
}
