package driver

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/usage"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// guardLoop measures the primary tenant every guard_interval, caps the
// harvested tasks' CPU, and evicts when the cap stays below their need, or
// for memory, or when the primary cannot be measured (guard.Guard); between
// ticks the spike check may bring a tick forward (spike.go).
func (d *Driver) guardLoop() {
	d.mu.Lock()
	interval, every := d.settings.interval, d.settings.spikeCheck
	d.mu.Unlock()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var peeks <-chan time.Time
	if every > 0 {
		peek := time.NewTicker(every)
		defer peek.Stop()
		peeks = peek.C
	}
	d.guardOnce(time.Now())
	close(d.looped)
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-ticker.C:
			d.guardOnce(time.Now())
			d.spike.ticked()
		case <-peeks:
			if cpu, ok := d.spiked(); ok {
				d.met.earlyTicks.Inc()
				d.guardTick(time.Now(), cpu)
				ticker.Reset(interval)
			}
		}
	}
}

// harvestedNow is what the running harvested tasks used at their last stats.
func (d *Driver) harvestedNow() guard.Resources {
	var harvested guard.Resources
	for _, h := range d.tasks.running() {
		h.mu.RLock()
		harvested = harvested.Add(h.used)
		h.mu.RUnlock()
	}
	return harvested
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
func (d *Driver) guardOnce(now time.Time) guard.Plan { return d.guardTick(now, 0) }

// guardTick is a tick at which the primary tenant's CPU is at least
// spikeCPU (the spike check's peeks; 0 at a regular tick).
func (d *Driver) guardTick(now time.Time, spikeCPU float64) guard.Plan {
	harvested := d.harvestedOver(&d.tickMeter, d.harvestedNow())
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
	// A window too uncertain to rate is no measurement and no failure: the
	// last good one stays in force (and ages towards stale_after), and the
	// next tick's window covers this one.
	uncertain := errors.Is(err, usagesource.ErrUncertainTiming)
	if uncertain {
		d.met.readingsDiscarded.WithLabelValues(windowTick).Inc()
	}
	d.mu.Lock()
	if d.source != src { // reconfigured while measuring: this measurement is stale
		d.mu.Unlock()
		return guard.Plan{}
	}
	if uncertain {
		err = d.sourceErr // as it was: neither logged as a failure nor as a recovery
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
	measured := primary
	switch {
	case uncertain:
		// the spike check's evidence stands without a tick's window
		d.primary.CPU = max(d.primary.CPU, spikeCPU)
	case err == nil:
		primary.CPU = max(primary.CPU, spikeCPU)
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
	why := tickFacts{plan: plan, reserve: reserve, capacity: s.capacity, measured: primary}
	for _, e := range plan.Evict {
		if h, ok := d.tasks.get(e.ID); ok {
			why.victims = append(why.victims, h.cfg.Name+"@"+shortID(h.cfg.AllocID))
		}
	}
	if newSuppression {
		d.suppress(why)
	}
	for k, e := range plan.Evict {
		if h, ok := d.tasks.get(e.ID); ok {
			d.evict(h, why, e.Reason, k+1)
		}
	}
	d.met.tick(plan, reserve, primary, harvested)
	if err == nil && !uncertain {
		d.reporter.Observe(now, measured)
	}
	return plan
}

// suppress tells every running task that a suppression began: the cap is
// below what they need to progress.
func (d *Driver) suppress(why tickFacts) {
	plan := why.plan
	msg := plan.SuppressionMessage(d.grace())
	tasks := d.liveTasks()
	d.logger.Warn("harvested tasks suppressed", "tasks", len(tasks), "cap_cores", plan.Cap, "need_cores", plan.Need,
		"primary_cores", plan.Primary.CPU)
	for _, h := range tasks {
		ann := why.annotations(h)
		ann[contract.AnnotationSuppressed] = contract.AnnotationTrue
		d.eventer.EmitEvent(&drivers.TaskEvent{
			TaskID: h.cfg.ID, TaskName: h.cfg.Name, AllocID: h.cfg.AllocID, Timestamp: time.Now(), Message: msg, Annotations: ann,
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
// from a failure. The event's annotations carry the tick's figures and the
// task's place among the victims, for harvestctl explain alloc.
func (d *Driver) evict(h *taskHandle, why tickFacts, reason guard.Reason, rank int) {
	plan := why.plan
	msg := plan.EvictionMessage(reason, d.grace())
	h.mu.Lock()
	if h.evicted != "" {
		h.mu.Unlock()
		return
	}
	h.evicted = msg
	h.mu.Unlock()
	d.met.evictions.WithLabelValues(string(reason)).Inc()
	d.logger.Warn("evicting task", "task", h.cfg.Name, "alloc_id", h.cfg.AllocID, "started", h.startedAt, "why", reason,
		"primary_cores", plan.Primary.CPU, "primary_mib", plan.Primary.MemoryMiB, "cap_cores", plan.Cap, "need_cores", plan.Need)
	ann := why.annotations(h)
	ann[contract.AnnotationEvicted], ann[contract.AnnotationReason] = contract.AnnotationTrue, string(reason)
	ann[contract.AnnotationVictimRank] = strconv.Itoa(rank) + "/" + strconv.Itoa(len(plan.Evict))
	d.eventer.EmitEvent(&drivers.TaskEvent{
		TaskID: h.cfg.ID, TaskName: h.cfg.Name, AllocID: h.cfg.AllocID, Timestamp: time.Now(), Message: msg, Annotations: ann,
	})
	go func() {
		if err := h.exec.Shutdown("SIGKILL", 0); err != nil {
			h.logger.Warn("eviction kill failed", "error", err)
		}
	}()
}

// tickFacts are what one guard tick saw and decided, as an event tells it.
type tickFacts struct {
	plan              guard.Plan
	reserve, capacity guard.Resources
	measured          guard.Resources // the primary as measured (the plan's is rounded up)
	victims           []string        // youngest first, as name@alloc
}

// annotations are the tick's figures for one task's event.
func (f tickFacts) annotations(h *taskHandle) map[string]string {
	ann := map[string]string{
		contract.AnnotationPrimaryCores:   formatCores(f.measured.CPU),
		contract.AnnotationPrimaryRounded: formatCores(f.plan.Primary.CPU),
		contract.AnnotationPrimaryMiB:     strconv.FormatFloat(f.plan.Primary.MemoryMiB, 'f', 0, 64),
		contract.AnnotationReserveCores:   formatCores(f.reserve.CPU),
		contract.AnnotationReserveMiB:     strconv.FormatFloat(f.reserve.MemoryMiB, 'f', 0, 64),
		contract.AnnotationCapacityCores:  formatCores(f.capacity.CPU),
		contract.AnnotationCapCores:       formatCores(f.plan.Cap),
		contract.AnnotationNeedCores:      formatCores(f.plan.Need),
		contract.AnnotationTaskStarted:    h.startedAt.UTC().Format(time.RFC3339Nano),
	}
	if len(f.victims) > 0 {
		ann[contract.AnnotationVictims] = strings.Join(f.victims, ",")
	}
	if !f.plan.Since.IsZero() {
		ann[contract.AnnotationSuppressedSince] = f.plan.Since.UTC().Format(time.RFC3339Nano)
	}
	return ann
}

// shortID is the first 8 characters of an ID, as Nomad's CLI shows it.
func shortID(id string) string { return id[:min(8, len(id))] }
