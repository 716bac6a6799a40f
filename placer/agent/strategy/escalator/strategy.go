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
// would restart them. The step a job is at is read from its class rule, so
// the meta is not needed to know it.
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
	// steps are the steps read from waiting jobs' class rules, by run
	// (namespace/job@JobModifyIndex: a run's spec does not change), so a job
	// that waits at its step costs no read of its spec each pass; runs no
	// longer waiting are dropped at the end of a pass.
	steps map[string]escalation.Step
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
	chosen := strings.Split(job.Meta[proxy.ClassesKey], ",")
	for _, c := range job.Constraints {
		if c.LTarget == proxy.ClassAttribute {
			if len(strings.Split(c.RTarget, ",")) > len(chosen) {
				return escalation.MoreClass
			}
			return escalation.Chosen
		}
	}
	return escalation.AnyNode
}

// Pass escalates each waiting (blocked or partly placed) harvested job
// whose next step is due.
func (e *Strategy) Pass(ctx context.Context) error {
	jobs, err := e.view.HarvestedJobs(ctx)
	if err != nil {
		return err
	}
	waitingRuns := map[string]bool{}
	for _, j := range jobs {
		// a job Algorithm 1 named no class for has no class rule to relax
		w := waitOf(j)
		if c := j.Meta[proxy.ClassesKey]; c == "" || c == proxy.NoClass || w == notWaiting {
			continue
		}
		waitingRuns[runOf(j)] = true
		if err := e.job(ctx, j, w); err != nil {
			e.log.Warn("escalating job failed", "job", j.ID, "namespace", j.Namespace, "error", err)
		}
	}
	for run := range e.steps {
		if !waitingRuns[run] {
			delete(e.steps, run)
		}
	}
	return nil
}

func runOf(j *nomadapi.JobListStub) string {
	return fmt.Sprintf("%s/%s@%d", j.Namespace, j.ID, j.JobModifyIndex)
}

// since is when the job's placement first blocked: kept in its meta after
// the first step, else its oldest blocked evaluation, else its submission.
func (e *Strategy) since(ctx context.Context, j *nomadapi.JobListStub) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, j.Meta[proxy.BlockedSince]); err == nil {
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
	since, err := e.since(ctx, stub)
	if err != nil {
		return err
	}
	// the meta's step, where a blocked job's escalation wrote it, spares
	// reading the spec; the class rule is the step's authority
	target := escalation.Escalate(since, e.now(), delay)
	if step, read := e.steps[runOf(stub)]; target <= parseStep(stub.Meta[proxy.EscalationKey]) || read && target <= step {
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
	if e.steps == nil {
		e.steps = map[string]escalation.Step{}
	}
	e.steps[runOf(stub)] = current
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
	job.Constraints = kept
	if w == blocked { // nothing runs that a meta change would restart
		job.Meta[proxy.EscalationKey] = target.String()
		job.Meta[proxy.BlockedSince] = since.UTC().Format(time.RFC3339Nano)
		job.Meta[proxy.ReasonKey] = fmt.Sprintf("escalated to %s after %s blocked on %s; %s",
			target, e.now().Sub(since).Round(time.Second), job.Meta[proxy.ClassesKey], job.Meta[proxy.ReasonKey])
	}
	resp, _, err := e.nomad.Jobs().EnforceRegister(job, *job.JobModifyIndex, (&nomadapi.WriteOptions{Namespace: stub.Namespace}).WithContext(ctx))
	if err != nil {
		return err
	}
	if err := e.admitted.As("escalator").Admit(ctx, stub.Namespace, stub.ID, resp.JobModifyIndex); err != nil {
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
