package driver

import (
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/driver/guard"
)

// guardLoop measures the primary tenant every guard_interval and evicts
// harvested tasks, youngest first, when the reserve is broken.
func (d *Driver) guardLoop() {
	d.mu.Lock()
	interval := d.settings.interval
	d.mu.Unlock()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		d.guardOnce(time.Now())
		select {
		case <-d.ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// guardTasks lists the running tasks as the guard sees them.
func (d *Driver) guardTasks() []guard.Task {
	var out []guard.Task
	for _, h := range d.tasks.running() {
		out = append(out, guard.Task{ID: h.cfg.ID, Name: h.cfg.Name, Started: h.startedAt, Alloc: h.alloc})
	}
	return out
}

// guardOnce is one pass of the loop: measure, decide, evict, report.
func (d *Driver) guardOnce(now time.Time) guard.Decision {
	handles := d.tasks.running()
	var harvested guard.Resources
	for _, h := range handles {
		h.mu.RLock()
		harvested = harvested.Add(h.used)
		h.mu.RUnlock()
	}
	d.mu.Lock()
	src, s, reserve, plug := d.source, d.settings, d.reserveLocked().Resources, d.plugin
	d.mu.Unlock()
	primary, err := src.Primary(harvested) // with a usage plugin, up to its call_timeout
	if plug != nil {
		plug.check() // the sample may have switched between the plugin and the built-in
	}
	d.mu.Lock()
	if d.source != src { // reconfigured while measuring: this measurement is stale
		d.mu.Unlock()
		return guard.Decision{}
	}
	if (err != nil) != (d.sourceErr != nil) {
		if err != nil {
			d.logger.Error("cannot measure the primary tenant; evicting on the last measurement", "error", err)
		} else {
			d.logger.Info("primary tenant measurable again")
		}
	}
	d.sourceErr = err
	if err == nil {
		d.primary = primary
		d.tracker.Observe(now, primary)
	}
	primary = d.primary // on error the reserve is still kept, on the last known primary
	d.mu.Unlock()

	dec := guard.Evictions(guard.State{Capacity: s.capacity, Reserve: reserve, Primary: primary, Tasks: d.guardTasks()})
	for _, victim := range dec.Evict {
		if h, ok := d.tasks.get(victim.ID); ok {
			d.evict(h, dec)
		}
	}
	d.reporter.observe(now, primary)
	return dec
}

// evict kills a task at once and says why, in a task event and in its exit
// result, so that Nomad reschedules it and the placer can tell an eviction
// from a failure.
func (d *Driver) evict(h *taskHandle, dec guard.Decision) {
	reason := dec.Reason()
	h.mu.Lock()
	if h.evicted != "" {
		h.mu.Unlock()
		return
	}
	h.evicted = reason
	h.mu.Unlock()
	d.logger.Warn("evicting task", "task", h.cfg.Name, "alloc_id", h.cfg.AllocID, "started", h.startedAt,
		"primary_cores", dec.Primary.CPU, "primary_mib", dec.Primary.MemoryMiB, "short_cores", dec.Shortfall.CPU)
	d.eventer.EmitEvent(&drivers.TaskEvent{
		TaskID: h.cfg.ID, TaskName: h.cfg.Name, AllocID: h.cfg.AllocID, Timestamp: time.Now(), Message: reason,
		Annotations: map[string]string{"harvest.evicted": "true"},
	})
	go func() {
		if err := h.exec.Shutdown("SIGKILL", 0); err != nil {
			h.logger.Warn("eviction kill failed", "error", err)
		}
	}()
}
