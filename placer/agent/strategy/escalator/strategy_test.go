package escalator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/classroom"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/escalation"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// pendingJob is a job of the fake Nomad submitted at submitted, its
// groups' allocations all queued.
func pendingJob(f *nomadtest.ScaleNomad, id string, submitted time.Time, meta map[string]string, constraints ...*nomadapi.Constraint) func() *nomadapi.Job {
	job := func() *nomadapi.Job {
		ns, name, one, pending := "default", "a", 1, "pending"
		idx, submit := uint64(7), submitted.UnixNano()
		return &nomadapi.Job{ID: &id, Name: &id, Namespace: &ns, Status: &pending, JobModifyIndex: &idx, ModifyIndex: &idx, SubmitTime: &submit,
			Meta: meta, Constraints: constraints, TaskGroups: []*nomadapi.TaskGroup{{Name: &name, Count: &one}}}
	}
	f.Jobs = append(f.Jobs, job())
	f.Summaries[id] = &nomadapi.JobSummary{JobID: id, Summary: map[string]nomadapi.TaskGroupSummary{"a": {Queued: 1}}}
	return job
}

// Escalation relaxes class rules; a job Algorithm 1 named no class for has
// none (it went to Nomad's default placement at once), so the escalator
// leaves it alone even while it waits for room.
func TestEscalatorIgnoresJobsWithNoClass(t *testing.T) {
	submitted := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	fake := nomadtest.NewScaleNomad(0, 0)
	pendingJob(fake, "classed", submitted, map[string]string{proxy.ClassesKey: "constant-1", proxy.JobTypeKey: "long"})
	pendingJob(fake, "free", submitted, map[string]string{proxy.ClassesKey: proxy.NoClass, proxy.JobTypeKey: "long"})
	client := fake.Serve(t)
	e := &Strategy{view: cluster.New(client), nomad: client, delay: time.Minute, log: hclog.NewNullLogger(),
		now: func() time.Time { return submitted.Add(time.Second) }} // not due yet: no step, no write
	if err := e.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fake.Requests("GET /v1/job/classed/evaluations") == 0 || fake.Requests("GET /v1/job/free/evaluations") != 0 {
		t.Fatalf("requests %v: want the classed job looked at and the one with no class skipped", fake.Snapshot())
	}
}

// A classed job blocked past the delay is re-registered with one more class
// (the next Algorithm 1 ranks), as the step after it with no class rule at
// all; each step keeps the job's other constraints and says why in its meta.
func TestEscalatorWidensThenDropsTheClassRule(t *testing.T) {
	submitted := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	fake := nomadtest.NewScaleNomad(0, 0)
	pendingJob(fake, "etl", submitted, map[string]string{proxy.ClassesKey: "c1", proxy.JobTypeKey: "medium"},
		nomadapi.NewConstraint(proxy.ClassAttribute, "set_contains_any", "c1"), nomadapi.NewConstraint("${attr.kernel.name}", "=", "linux"))
	client := fake.Serve(t)
	store := history.NewStore(kv.NewMem(), "")
	table := api.ClassTable{Classes: []api.Class{{Name: "c1", Pattern: "constant"}, {Name: "c2", Pattern: "periodic"}, {Name: "c3", Pattern: "unpredictable"}}}
	ctx := context.Background()
	if err := store.PutDocument(ctx, contract.ClassesDocument, table); err != nil {
		t.Fatal(err)
	}
	adm := admissions.New(store)
	view := cluster.New(client)
	now := submitted.Add(45 * time.Second)
	e := &Strategy{view: view, nomad: client, classes: classroom.New(store, view, time.Hour, func() time.Time { return now }),
		weights: proxy.NewLiveWeights(selectclass.DefaultWeights()), delay: 30 * time.Second, extra: 1, log: hclog.NewNullLogger(),
		metrics: NewMetrics(prometheus.NewRegistry()), now: func() time.Time { return now }, admitted: adm}
	for _, step := range []struct {
		at      time.Duration
		want    string // the class rule's classes, "" for none
		stepped string
	}{{45 * time.Second, "c1,", "more-classes"}, {75 * time.Second, "", "any-harvested-node"}} {
		fake.Mu.Lock()
		index := *fake.Jobs[0].JobModifyIndex // the run the placer admitted
		fake.Mu.Unlock()
		if err := adm.Admit(ctx, "default", "etl", index); err != nil {
			t.Fatal(err)
		}
		now = submitted.Add(step.at)
		if err := e.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		fake.Mu.Lock()
		if len(fake.Registered) == 0 {
			fake.Mu.Unlock()
			t.Fatalf("after %s: nothing re-registered", step.at)
		}
		got := fake.Registered[len(fake.Registered)-1]
		fake.Mu.Unlock()
		var class string
		kept := 0
		for _, c := range got.Constraints {
			if c.LTarget == proxy.ClassAttribute {
				class = c.RTarget
			} else {
				kept++
			}
		}
		if got.Meta[proxy.EscalationKey] != step.stepped || kept != 1 || !strings.HasPrefix(class, step.want) ||
			(step.want != "" && len(strings.Split(class, ",")) != 2) || (step.want == "" && class != "") {
			t.Fatalf("after %s: step %q, class rule %q, %d other constraints; want %s, %q plus one class, the kernel rule kept",
				step.at, got.Meta[proxy.EscalationKey], class, kept, step.stepped, step.want)
		}
	}
}

// A job waits blocked with only queued (or failed and lost) allocations,
// partly placed with some starting or running too, and not at all with a
// complete one (a new version would run it again), nothing queued, or
// when stopped.
func TestWaitOfTellsBlockedFromPartlyPlaced(t *testing.T) {
	stub := func(s nomadapi.TaskGroupSummary) *nomadapi.JobListStub {
		return &nomadapi.JobListStub{Status: "pending", JobSummary: &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"g": s}}}
	}
	for _, tc := range []struct {
		s    nomadapi.TaskGroupSummary
		want waiting
		why  string
	}{
		{nomadapi.TaskGroupSummary{Queued: 2}, blocked, "queued with nothing placed"},
		{nomadapi.TaskGroupSummary{Queued: 2, Failed: 2, Lost: 1}, blocked, "refused (failed) or lost allocations whose replacements are queued"},
		{nomadapi.TaskGroupSummary{Queued: 1, Running: 1}, partlyPlaced, "one running, one queued"},
		{nomadapi.TaskGroupSummary{Queued: 1, Starting: 1}, partlyPlaced, "one starting, one queued"},
		{nomadapi.TaskGroupSummary{Queued: 1, Complete: 1}, notWaiting, "a task done (a new version would run it again)"},
		{nomadapi.TaskGroupSummary{Queued: 1, Running: 1, Complete: 1}, notWaiting, "a task done beside a running one"},
		{nomadapi.TaskGroupSummary{}, notWaiting, "nothing queued"},
	} {
		if got := waitOf(stub(tc.s)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.why, got, tc.want)
		}
	}
	stopped := stub(nomadapi.TaskGroupSummary{Queued: 1})
	stopped.Stop = true
	if waitOf(stopped) != notWaiting {
		t.Fatal("a stopped job waits")
	}
}

// The step is read from the class rule: the chosen classes alone, more,
// or none.
func TestStepOfReadsTheClassRule(t *testing.T) {
	job := func(constraints ...*nomadapi.Constraint) *nomadapi.Job {
		return &nomadapi.Job{Meta: map[string]string{proxy.ClassesKey: "c1,c2"}, Constraints: constraints}
	}
	kernel := nomadapi.NewConstraint("${attr.kernel.name}", "=", "linux")
	for _, tc := range []struct {
		job  *nomadapi.Job
		want escalation.Step
	}{
		{job(kernel, nomadapi.NewConstraint(proxy.ClassAttribute, "set_contains_any", "c1,c2")), escalation.Chosen},
		{job(nomadapi.NewConstraint(proxy.ClassAttribute, "set_contains_any", "c1,c2,c3")), escalation.MoreClass},
		{job(kernel), escalation.AnyNode},
	} {
		if got := stepOf(tc.job); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.job.Constraints, got, tc.want)
		}
	}
}

// partlyPlacedJobs serves jobs of a fake Nomad, each one running and one
// queued task of group "a" on class c1, submitted at submitted, admitted at
// index 7, with classes in the class table, and plans that update the
// running task in place; it returns an escalator (30 s
// delay, one extra class) whose clock the caller sets through the returned
// pointer.
func partlyPlacedJobs(t *testing.T, fake *nomadtest.ScaleNomad, submitted time.Time, classes []api.Class, jobs map[string][]*nomadapi.Constraint) (*Strategy, *time.Time) {
	t.Helper()
	meta := map[string]string{proxy.ClassesKey: "c1", proxy.JobTypeKey: "medium", proxy.ReasonKey: "chosen"}
	fake.PlanUpdates = map[string]map[string]*nomadapi.DesiredUpdates{}
	for id, constraints := range jobs {
		pendingJob(fake, id, submitted, meta, constraints...)
		fake.Summaries[id].Summary["a"] = nomadapi.TaskGroupSummary{Queued: 1, Running: 1}
		// by default the plan updates the running one in place; Stop counts
		// a failed allocation being replaced, not a running one
		fake.PlanUpdates[id] = map[string]*nomadapi.DesiredUpdates{"a": {InPlaceUpdate: 1, Place: 2, Stop: 1}}
	}
	client := fake.Serve(t)
	store := history.NewStore(kv.NewMem(), "")
	ctx := context.Background()
	if err := store.PutDocument(ctx, contract.ClassesDocument, api.ClassTable{Classes: classes}); err != nil {
		t.Fatal(err)
	}
	adm := admissions.New(store)
	for id := range jobs {
		if err := adm.Admit(ctx, "default", id, 7); err != nil {
			t.Fatal(err)
		}
	}
	view := cluster.New(client)
	now := submitted
	e := &Strategy{view: view, nomad: client, classes: classroom.New(store, view, time.Hour, func() time.Time { return now }),
		weights: proxy.NewLiveWeights(selectclass.DefaultWeights()), delay: 30 * time.Second, extra: 1, log: hclog.NewNullLogger(),
		metrics: NewMetrics(prometheus.NewRegistry()), now: func() time.Time { return now }, admitted: adm}
	return e, &now
}

// A partly placed job past the delay is re-registered with the wider class
// rule and its meta untouched (a meta change would restart its running
// allocation), and one delay later with none, counted from when it first
// waited although Nomad moved its SubmitTime to the first escalation; a job
// placed by an affinity has no class rule to relax and is left alone, its
// spec read once for its run.
func TestPartlyPlacedJobEscalatesByItsConstraintsAlone(t *testing.T) {
	submitted := time.Now() // the placer admits the runs now: when they began
	fake := nomadtest.NewScaleNomad(0, 0)
	e, now := partlyPlacedJobs(t, fake, submitted, []api.Class{{Name: "c1", Pattern: "constant"}, {Name: "c2", Pattern: "periodic"}},
		map[string][]*nomadapi.Constraint{"etl": {nomadapi.NewConstraint(proxy.ClassAttribute, "set_contains_any", "c1")}, "near": nil})
	ctx := context.Background()
	*now = submitted.Add(45 * time.Second)
	if err := e.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	fake.Mu.Lock()
	if len(fake.Registered) == 1 {
		moved := now.UnixNano() // Nomad's SubmitTime of the new version
		fake.Registered[0].SubmitTime = &moved
	}
	fake.Mu.Unlock()
	reads := fake.Requests("GET /v1/job/near")
	if err := e.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if reads != 1 || fake.Requests("GET /v1/job/near") != 1 {
		t.Errorf("near's spec read %d times in the first pass, %d after the second; want once", reads, fake.Requests("GET /v1/job/near"))
	}
	fake.Mu.Lock()
	if len(fake.Registered) != 1 || *fake.Registered[0].ID != "etl" {
		fake.Mu.Unlock()
		t.Fatalf("registered %d jobs, want etl alone (near has no class rule)", len(fake.Registered))
	}
	got := fake.Registered[0]
	if stepOf(got) != escalation.MoreClass {
		t.Errorf("constraints %v: want the class rule widened", got.Constraints)
	}
	if got.Meta[proxy.EscalationKey] != "" || got.Meta[proxy.BlockedSince] != "" || got.Meta[proxy.ReasonKey] != "chosen" {
		t.Errorf("meta %v: want it untouched", got.Meta)
	}
	fake.Mu.Unlock()
	*now = submitted.Add(75 * time.Second)
	if err := e.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	fake.Mu.Lock()
	defer fake.Mu.Unlock()
	if len(fake.Registered) != 2 || stepOf(fake.Registered[1]) != escalation.AnyNode {
		t.Fatalf("%d registrations: want a second, with no class rule, two delays after the job first waited", len(fake.Registered))
	}
}

// While Nomad's plan says the escalation would stop or replace a running
// allocation (its node no longer passes the room rule, say), the step is
// held for a delay and nothing is registered; a widening that adds no class
// registers nothing either.
func TestPartlyPlacedEscalationWaitsForAPlanInPlace(t *testing.T) {
	submitted := time.Now() // the placer admits the runs now: when they began
	fake := nomadtest.NewScaleNomad(0, 0)
	rule := []*nomadapi.Constraint{nomadapi.NewConstraint(proxy.ClassAttribute, "set_contains_any", "c1")}
	e, now := partlyPlacedJobs(t, fake, submitted, []api.Class{{Name: "c1", Pattern: "constant"}, {Name: "c2", Pattern: "periodic"}},
		map[string][]*nomadapi.Constraint{"etl": rule})
	fake.Mu.Lock()
	fake.PlanUpdates["etl"]["a"] = &nomadapi.DesiredUpdates{DestructiveUpdate: 1, Place: 1}
	fake.Mu.Unlock()
	ctx := context.Background()
	for _, at := range []time.Duration{45 * time.Second, 50 * time.Second} {
		*now = submitted.Add(at)
		if err := e.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fake.Mu.Lock()
	registered := len(fake.Registered)
	fake.Mu.Unlock()
	if plans := fake.Requests("PUT /v1/job/etl/plan"); plans != 1 || registered != 0 {
		t.Fatalf("%d plans, %d registrations: want one plan, then the step held, nothing registered", plans, registered)
	}
	fake.Mu.Lock()
	fake.PlanUpdates["etl"]["a"] = &nomadapi.DesiredUpdates{InPlaceUpdate: 1, Place: 1}
	fake.Mu.Unlock()
	*now = submitted.Add(76 * time.Second) // a delay after the hold, and at AnyNode
	if err := e.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	fake.Mu.Lock()
	got := fake.Registered
	fake.Mu.Unlock()
	if plans := fake.Requests("PUT /v1/job/etl/plan"); plans != 2 || len(got) != 1 || stepOf(got[0]) != escalation.AnyNode {
		t.Fatalf("%d plans, %d registrations: want a second plan, in place, and the job registered with no class rule", plans, len(got))
	}

	lone := nomadtest.NewScaleNomad(0, 0)
	e, now = partlyPlacedJobs(t, lone, submitted, []api.Class{{Name: "c1", Pattern: "constant"}}, map[string][]*nomadapi.Constraint{"etl": rule})
	*now = submitted.Add(45 * time.Second)
	for range 2 {
		if err := e.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lone.Mu.Lock()
	registered = len(lone.Registered)
	lone.Mu.Unlock()
	if registered != 0 || lone.Requests("PUT /v1/job/etl/plan") != 0 || lone.Requests("GET /v1/job/etl") != 1 {
		t.Fatalf("no other class: %d registrations, %d plans, %d spec reads; want none, none, one",
			registered, lone.Requests("PUT /v1/job/etl/plan"), lone.Requests("GET /v1/job/etl"))
	}
}

func TestParseStepRoundTrips(t *testing.T) {
	for st := escalation.Chosen; st <= escalation.AnyNode; st++ {
		if parseStep(st.String()) != st {
			t.Fatalf("%s", st)
		}
	}
	if parseStep("") != escalation.Chosen {
		t.Fatal("no step recorded is the chosen classes")
	}
}
