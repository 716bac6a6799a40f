package driver

import (
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/usage"
)

// guardLoop measures the primary tenant every guard_interval, caps the
// harvested tasks' CPU, and evicts when the cap stays below their need, or
// for memory, or when the primary cannot be measured (guard.Guard).
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

// guardTasks lists the running tasks as the guard sees them; an evicted
// task on its way out no longer counts.
func (d *Driver) guardTasks() []guard.Task {
	var out []guard.Task
	for _, h := range d.liveTasks() {
		out = append(out, guard.Task{ID: h.cfg.ID, Name: h.cfg.Name, Started: h.startedAt, Alloc: h.alloc})
	}
	return out
}

// liveTasks are the running tasks not being evicted.
func (d *Driver) liveTasks() []*taskHandle {
	var out []*taskHandle
	for _, h := range d.tasks.running() {
		h.mu.RLock()
		evicted := h.evicted != ""
		h.mu.RUnlock()
		if !evicted {
			out = append(out, h)
		}
	}
	return out
}

// guardOnce is one tick: measure, cap, suppress, evict, report. A sample
// that fails, or whose values are not numbers a primary can use, keeps the
// last good one in force until it is older than stale_after; then the guard
// fails safe until a good sample comes.
func (d *Driver) guardOnce(now time.Time) guard.Plan {
	var harvested guard.Resources
	for _, h := range d.tasks.running() {
		h.mu.RLock()
		harvested = harvested.Add(h.used)
		h.mu.RUnlock()
	}
	d.mu.Lock()
	src, s, reserve, plug := d.source, d.settings, d.reserveLocked().Resources, d.plugin
	d.mu.Unlock()
	primary, err := src.Primary(harvested) // with a usage plugin, up to its call_timeout
	if err == nil {
		err = usage.Check(primary)
	}
	if plug != nil {
		plug.check() // the sample may have switched between the plugin and the built-in
	}
	d.mu.Lock()
	if d.source != src { // reconfigured while measuring: this measurement is stale
		d.mu.Unlock()
		return guard.Plan{}
	}
	if (err != nil) != (d.sourceErr != nil) {
		if err != nil {
			d.logger.Error("cannot measure the primary tenant; keeping the last good measurement until stale_after",
				"error", err, "stale_after", s.policy.StaleAfter)
		} else {
			d.logger.Info("primary tenant measurable again")
		}
	}
	d.sourceErr = err
	if err == nil {
		d.primary, d.lastGood = primary, now
		d.tracker.Observe(now, primary)
	}
	primary = d.primary
	plan := d.guard.Step(guard.Input{Now: now, Age: now.Sub(d.lastGood),
		State: guard.State{Capacity: s.capacity, Reserve: reserve, Primary: primary, Tasks: d.guardTasks()}})
	enteredFailSafe := plan.Stale && !d.failSafe
	if plan.Stale != d.failSafe {
		d.failSafe = plan.Stale
		if plan.Stale {
			d.logger.Error("failing safe: the primary tenant is unmeasured; harvested CPU capped to nothing, every harvested task evicted, none admitted",
				"last_good", d.lastGood, "stale_after", s.policy.StaleAfter, "error", err)
		} else {
			d.logger.Info("primary tenant measured again: harvesting resumes", "unmeasured_for", plan.Age)
		}
		d.wakeFingerprintLocked()
	}
	newSuppression := false // told once per suppression, not again after each dip above the need
	if plan.Suppressed && !plan.Stale {
		newSuppression, d.suppressed = !plan.Since.Equal(d.suppressed), plan.Since
	}
	cg := d.cgroup
	d.mu.Unlock()

	// relief first: the cap, then the events and evictions
	if cg != nil {
		if _, err := cg.SetCap(plan.Cap); err != nil {
			d.logger.Error("cannot set the harvest cgroup's CPU cap", "cap_cores", plan.Cap, "error", err)
		}
	}
	if enteredFailSafe {
		d.met.suppressions.WithLabelValues(string(guard.ReasonStale)).Inc()
	}
	if newSuppression {
		d.suppress(plan)
	}
	for _, e := range plan.Evict {
		if h, ok := d.tasks.get(e.ID); ok {
			d.evict(h, plan, e.Reason)
		}
	}
	d.met.tick(plan, reserve, primary, harvested)
	if err == nil {
		d.reporter.observe(now, primary)
	}
	return plan
}

// suppress tells every running task that a suppression began: the cap is
// below what they need to progress.
func (d *Driver) suppress(plan guard.Plan) {
	msg := plan.SuppressionMessage(d.grace())
	tasks := d.liveTasks()
	d.logger.Warn("harvested tasks suppressed", "tasks", len(tasks), "cap_cores", plan.Cap, "need_cores", plan.Need,
		"primary_cores", plan.Primary.CPU)
	for _, h := range tasks {
		d.eventer.EmitEvent(&drivers.TaskEvent{
			TaskID: h.cfg.ID, TaskName: h.cfg.Name, AllocID: h.cfg.AllocID, Timestamp: time.Now(), Message: msg,
			Annotations: map[string]string{"harvest.suppressed": "true", "harvest.cap_cores": formatCores(plan.Cap)},
		})
		d.met.suppressions.WithLabelValues(string(guard.ReasonCPU)).Inc()
	}
}

func (d *Driver) grace() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.settings.policy.Grace
}

// evict kills a task at once and says why, in a task event and in its exit
// result, so that Nomad reschedules it and the placer can tell an eviction
// from a failure.
func (d *Driver) evict(h *taskHandle, plan guard.Plan, why guard.Reason) {
	reason := plan.EvictionMessage(why, d.grace())
	h.mu.Lock()
	if h.evicted != "" {
		h.mu.Unlock()
		return
	}
	h.evicted = reason
	h.mu.Unlock()
	d.met.evictions.WithLabelValues(string(why)).Inc()
	d.logger.Warn("evicting task", "task", h.cfg.Name, "alloc_id", h.cfg.AllocID, "started", h.startedAt, "why", why,
		"primary_cores", plan.Primary.CPU, "primary_mib", plan.Primary.MemoryMiB, "cap_cores", plan.Cap, "need_cores", plan.Need)
	d.eventer.EmitEvent(&drivers.TaskEvent{
		TaskID: h.cfg.ID, TaskName: h.cfg.Name, AllocID: h.cfg.AllocID, Timestamp: time.Now(), Message: reason,
		Annotations: map[string]string{"harvest.evicted": "true", "harvest.reason": string(why)},
	})
	go func() {
		if err := h.exec.Shutdown("SIGKILL", 0); err != nil {
			h.logger.Warn("eviction kill failed", "error", err)
		}
	}()
}
