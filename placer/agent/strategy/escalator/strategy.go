package escalator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/classroom"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/escalation"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// Strategy relaxes the class constraint of harvested jobs that stay
// blocked on their chosen classes (placement-escalation.txt, "Placement
// Escalation"): one step per delay — more classes by weighted room, then
// any harvested node (greylist and partition rules stay). Each step is a
// new version of the job (a blocked one's with the step in its meta), so
// it shows in `nomad job status`, `nomad job history -p`, Nomad's event
// stream (a JobRegistered event) and the placer's log and metrics.
//
// A job with a complete allocation is never escalated: a new version of a
// batch job runs its older versions' complete allocations again (Nomad's
// reconciler, filterOldTerminalAllocs). A job partly placed (some
// allocations starting or running, some queued) is escalated by its
// constraints alone: a constraint is not among what makes Nomad's update
// destructive (scheduler/util.go, tasksUpdated), so its running allocations
// are updated in place and keep running, where a meta change ("task meta")
// would restart them. In place only where each one's node still passes the
// new version's rules (genericAllocUpdateFn), the room rule among them, so
// the escalator asks Nomad's plan first and holds the step for a delay
// while the plan would stop or replace any. The step a job is at is read
// from its class rule, so the meta is not needed to know it.
// A job Algorithm 1 named no class for (meta harvest_classes = "none"), or
// placed by an affinity (class_placement = "affinity"), carries no class
// constraint and is never escalated: it waits only for room.
type Strategy struct {
	view    cluster.View
	nomad   *nomadapi.Client
	classes *classroom.View
	weights *proxy.LiveWeights
	delay   time.Duration
	extra   int
	log     hclog.Logger
	metrics *Metrics
	now     func() time.Time
	// admitted: only runs the placer admitted are escalated (placer/agent/admissions)
	admitted admissions.Store
	// The escalator's memory of waiting jobs, dropped at the end of a pass
	// for those no longer waiting:
	//   - steps: the step read from a job's class rule, by run
	//     (namespace/job@JobModifyIndex: a run's spec does not change), so a
	//     job that waits at its step costs no read of its spec each pass;
	//   - since: when a run's placement first waited (since), by run;
	//   - held: runs Nomad's plan said an escalation would restart running
	//     allocations of, with when to plan again.
	steps map[string]escalation.Step
	since map[string]time.Time
	held  map[string]time.Time
}

// New is the escalation block's strategy (s, as config.Decode gave it)
// over the shared view: it reads the class room from classes with
// Algorithm 1's live weights, re-registers jobs through nomad, and acts
// only on the runs admitted records.
func New(view cluster.View, nomad *nomadapi.Client, classes *classroom.View, weights *proxy.LiveWeights, admitted admissions.Store,
	s config.EscalationSettings, log hclog.Logger, m *Metrics) *Strategy {
	return &Strategy{view: view, nomad: nomad, classes: classes, weights: weights, delay: s.Delay, extra: s.ExtraClasses,
		log: log, metrics: m, now: time.Now, admitted: admitted}
}

// LogBlocked and LogPartlyPlaced begin the log line of each escalation, by
// the kind of wait (the testbed counts them).
const (
	LogBlocked      = "escalated a blocked harvested job"
	LogPartlyPlaced = "escalated a partly placed harvested job"
)

// waiting is how a job waits for its placement.
type waiting int

const (
	notWaiting   waiting = iota
	blocked              // some allocation queued, none starting, running or complete
	partlyPlaced         // some queued, some starting or running, none complete
)

// waitOf says how a job waits. Failed and lost allocations do not count:
// their replacements are what waits (the testbed's job whose refused
// starts were replaced by allocations blocked on their class would have
// waited for ever under the old rule), and a new version places the
// group's count afresh, ignoring the older versions' terminal allocations.
// A complete allocation means the job does not wait: a new version would
// run it again.
func waitOf(j *nomadapi.JobListStub) waiting {
	if j.Stop || j.Status == "dead" || j.JobSummary == nil {
		return notWaiting
	}
	queued, placed := 0, 0
	for _, s := range j.JobSummary.Summary {
		if s.Complete > 0 {
			return notWaiting
		}
		queued, placed = queued+s.Queued, placed+s.Running+s.Starting
	}
	switch {
	case queued == 0:
		return notWaiting
	case placed == 0:
		return blocked
	}
	return partlyPlaced
}

// stepOf is the step a job's class rule is at: the chosen classes alone,
// more than them, or none (any harvested node).
func stepOf(job *nomadapi.Job) escalation.Step {
	rule := classRule(job.Constraints)
	switch {
	case rule == "":
		return escalation.AnyNode
	case len(strings.Split(rule, ",")) > len(strings.Split(job.Meta[proxy.ClassesKey], ",")):
		return escalation.MoreClass
	}
	return escalation.Chosen
}

// Pass escalates each waiting (blocked or partly placed) harvested job
// whose next step is due.
func (e *Strategy) Pass(ctx context.Context) error {
	jobs, err := e.view.HarvestedJobs(ctx)
	if err != nil {
		return err
	}
	if e.steps == nil {
		e.steps, e.since, e.held = map[string]escalation.Step{}, map[string]time.Time{}, map[string]time.Time{}
	}
	waiting := map[string]bool{} // runs
	for _, j := range jobs {
		// a job Algorithm 1 named no class for has no class rule to relax
		w := waitOf(j)
		if c := j.Meta[proxy.ClassesKey]; c == "" || c == proxy.NoClass || w == notWaiting {
			continue
		}
		waiting[runOf(j)] = true
		if err := e.job(ctx, j, w); err != nil {
			e.log.Warn("escalating job failed", "job", j.ID, "namespace", j.Namespace, "error", err)
		}
	}
	for k := range e.steps {
		if !waiting[k] {
			delete(e.steps, k)
		}
	}
	for _, m := range []map[string]time.Time{e.since, e.held} {
		for k := range m {
			if !waiting[k] {
				delete(m, k)
			}
		}
	}
	return nil
}

// classRule is the class constraint's classes among constraints ("" for
// none).
func classRule(constraints []*nomadapi.Constraint) string {
	for _, c := range constraints {
		if c.LTarget == proxy.ClassAttribute {
			return c.RTarget
		}
	}
	return ""
}

// restarts is how many of the job's live (running or starting)
// allocations Nomad's plan of job would not update in place: stop, replace
// or leave for later. The plan's Stop also counts failed allocations being
// replaced, so the live ones are counted against its in-place updates.
func (e *Strategy) restarts(ctx context.Context, job *nomadapi.Job, stub *nomadapi.JobListStub) (uint64, error) {
	plan, _, err := e.nomad.Jobs().PlanOpts(job, &nomadapi.PlanOptions{}, (&nomadapi.WriteOptions{Namespace: stub.Namespace}).WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("planning the escalation: %w", err)
	}
	var live, inPlace uint64
	for _, s := range stub.JobSummary.Summary {
		live += uint64(s.Running + s.Starting)
	}
	if plan.Annotations != nil {
		for _, u := range plan.Annotations.DesiredTGUpdates {
			if u != nil {
				inPlace += u.InPlaceUpdate
			}
		}
	}
	if inPlace >= live {
		return 0, nil
	}
	return live - inPlace, nil
}

func runOf(j *nomadapi.JobListStub) string {
	return fmt.Sprintf("%s/%s@%d", j.Namespace, j.ID, j.JobModifyIndex)
}

// waitedSince is when the job's placement first waited: kept in its meta
// after a blocked job's first step, else the earliest of its oldest blocked
// evaluation, its submission and when the placer admitted the run (which
// an escalation's version continues: each version moves Nomad's
// SubmitTime and cancels the older versions' blocked evaluations, so a
// partly placed job's escalation, which writes no meta, counts from there),
// read once per run.
func (e *Strategy) waitedSince(ctx context.Context, j *nomadapi.JobListStub) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, j.Meta[proxy.BlockedSince]); err == nil {
		return t, nil
	}
	run := runOf(j)
	if t, ok := e.since[run]; ok {
		return t, nil
	}
	evals, _, err := e.nomad.Jobs().Evaluations(j.ID, (&nomadapi.QueryOptions{Namespace: j.Namespace}).WithContext(ctx))
	if err != nil {
		return time.Time{}, err
	}
	since := time.Unix(0, j.SubmitTime)
	for _, ev := range evals {
		if ev.Status == "blocked" && ev.CreateTime > 0 && time.Unix(0, ev.CreateTime).Before(since) {
			since = time.Unix(0, ev.CreateTime)
		}
	}
	if began, ok, err := e.admitted.Began(ctx, j.Namespace, j.ID, j.JobModifyIndex); err == nil && ok && began.Before(since) {
		since = began
	}
	if e.since != nil {
		e.since[run] = since
	}
	return since, nil
}

func parseStep(s string) escalation.Step {
	for st := escalation.Chosen; st <= escalation.AnyNode; st++ {
		if st.String() == s {
			return st
		}
	}
	return escalation.Chosen
}

func (e *Strategy) job(ctx context.Context, stub *nomadapi.JobListStub, w waiting) error {
	delay := e.delay
	if v := stub.Meta[proxy.EscalateAfter]; v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			delay = d
		}
	}
	since, err := e.waitedSince(ctx, stub)
	if err != nil {
		return err
	}
	// the meta's step, where a blocked job's escalation wrote it, spares
	// reading the spec; the class rule is the step's authority
	target, run := escalation.Escalate(since, e.now(), delay), runOf(stub)
	if step, read := e.steps[run]; target <= parseStep(stub.Meta[proxy.EscalationKey]) || read && target <= step {
		return nil
	}
	if until, held := e.held[run]; held && e.now().Before(until) {
		return nil
	}
	// only a run the placer admitted is re-registered with its token
	if ok, err := e.admitted.Admitted(ctx, stub.Namespace, stub.ID, stub.JobModifyIndex); err != nil || !ok {
		if err == nil {
			e.log.Debug("not escalating a job the placer did not admit", "job", stub.ID, "namespace", stub.Namespace)
		}
		return err
	}
	q := (&nomadapi.QueryOptions{Namespace: stub.Namespace}).WithContext(ctx)
	job, _, err := e.nomad.Jobs().Info(stub.ID, q)
	if err != nil {
		return err
	}
	current := stepOf(job)
	if e.steps != nil {
		e.steps[run] = current
	}
	if target <= current {
		return nil
	}
	jobType := job.Meta[proxy.JobTypeKey]
	cands, err := e.classes.Candidates(ctx, jobType)
	if err != nil {
		return err
	}
	chosen := strings.Split(job.Meta[proxy.ClassesKey], ",")
	widened := escalation.Widen(target, chosen, selectclass.Rank(jobType, cands, e.weights.Load()), e.extra)
	var kept []*nomadapi.Constraint
	for _, c := range job.Constraints {
		if c.LTarget != proxy.ClassAttribute {
			kept = append(kept, c)
		}
	}
	what := "any harvested node"
	if target == escalation.MoreClass {
		kept = append(kept, nomadapi.NewConstraint(proxy.ClassAttribute, "set_contains_any", strings.Join(widened, ",")))
		what = "classes " + strings.Join(widened, ",")
	}
	if w == partlyPlaced {
		if classRule(kept) == classRule(job.Constraints) { // no class to add: the step changes nothing
			if e.steps != nil {
				e.steps[run] = target
			}
			return nil
		}
		job.Constraints = kept
		// Nomad updates a running allocation in place only where its node
		// still passes every rule of the new version (the room rule among
		// them, which counts the allocation's own task against the node):
		// ask its plan, and hold the step while it would restart any
		if restarts, err := e.restarts(ctx, job, stub); err != nil || restarts > 0 {
			if e.held != nil {
				e.held[run] = e.now().Add(delay) // the plan again after a delay, whether it failed or held
			}
			if err == nil {
				e.log.Info("not escalating a partly placed harvested job yet: Nomad would restart its running allocations",
					"job", stub.ID, "namespace", stub.Namespace, "step", target, "restarts", restarts)
			}
			return err
		}
	} else { // blocked: nothing runs that a meta change would restart
		job.Constraints = kept
		job.Meta[proxy.EscalationKey] = target.String()
		job.Meta[proxy.BlockedSince] = since.UTC().Format(time.RFC3339Nano)
		job.Meta[proxy.ReasonKey] = fmt.Sprintf("escalated to %s after %s blocked on %s; %s",
			target, e.now().Sub(since).Round(time.Second), job.Meta[proxy.ClassesKey], job.Meta[proxy.ReasonKey])
	}
	resp, _, err := e.nomad.Jobs().EnforceRegister(job, *job.JobModifyIndex, (&nomadapi.WriteOptions{Namespace: stub.Namespace}).WithContext(ctx))
	if err != nil {
		return err
	}
	if err := e.admitted.As("escalator").Continue(ctx, stub.Namespace, stub.ID, resp.JobModifyIndex); err != nil {
		return fmt.Errorf("escalated, but not recorded (its stages will not start): %w", err)
	}
	e.metrics.escalations.WithLabelValues(target.String()).Inc()
	msg := LogBlocked
	if w == partlyPlaced {
		msg = LogPartlyPlaced + " by its constraints alone (its running allocations are updated in place)"
	}
	e.log.Info(msg, "job", stub.ID, "namespace", stub.Namespace, "step", target,
		"blocked_for", e.now().Sub(since).Round(time.Second), "now_on", what)
	return nil
}
