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

func TestBlockedMeansQueuedWithNothingRunningOrDone(t *testing.T) {
	stub := func(s nomadapi.TaskGroupSummary) *nomadapi.JobListStub {
		return &nomadapi.JobListStub{Status: "pending", JobSummary: &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"g": s}}}
	}
	if !blocked(stub(nomadapi.TaskGroupSummary{Queued: 2})) {
		t.Fatal("queued with nothing placed is blocked")
	}
	if blocked(stub(nomadapi.TaskGroupSummary{Queued: 1, Running: 1})) {
		t.Fatal("partly placed must not escalate: a new version would restart the running allocation")
	}
	if blocked(stub(nomadapi.TaskGroupSummary{Queued: 1, Complete: 1})) {
		t.Fatal("a job with a task done must not escalate: a new version would run it again")
	}
	if !blocked(stub(nomadapi.TaskGroupSummary{Queued: 2, Failed: 2, Lost: 1})) {
		t.Fatal("refused (failed) or lost allocations whose replacements are queued are blocked")
	}
	if blocked(stub(nomadapi.TaskGroupSummary{})) {
		t.Fatal("nothing queued is not blocked")
	}
	stopped := stub(nomadapi.TaskGroupSummary{Queued: 1})
	stopped.Stop = true
	if blocked(stopped) {
		t.Fatal("a stopped job is not blocked")
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
