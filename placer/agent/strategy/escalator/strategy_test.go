package escalator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/classroom"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/escalation"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// Escalation relaxes class rules; a job Algorithm 1 named no class for has
// none (it went to Nomad's default placement at once), so the escalator
// leaves it alone even while it waits for room.
func TestEscalatorIgnoresJobsWithNoClass(t *testing.T) {
	submitted := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	queued := &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"g": {Queued: 1}}}
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = true
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/jobs":
			json.NewEncoder(w).Encode([]*nomadapi.JobListStub{
				{ID: "classed", Namespace: "default", Status: "pending", SubmitTime: submitted.UnixNano(), JobSummary: queued,
					Meta: map[string]string{proxy.ClassesKey: "constant-1", proxy.JobTypeKey: "long"}},
				{ID: "free", Namespace: "default", Status: "pending", SubmitTime: submitted.UnixNano(), JobSummary: queued,
					Meta: map[string]string{proxy.ClassesKey: proxy.NoClass, proxy.JobTypeKey: "long"}},
			})
		default: // evaluations
			json.NewEncoder(w).Encode([]*nomadapi.Evaluation{})
		}
	}))
	defer srv.Close()
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := &Strategy{view: cluster.New(client), nomad: client, delay: time.Minute, log: hclog.NewNullLogger(),
		now: func() time.Time { return submitted.Add(time.Second) }} // not due yet: no step, no write
	if err := e.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !seen["/v1/job/classed/evaluations"] || seen["/v1/job/free/evaluations"] {
		t.Fatalf("requests %v: want the classed job looked at and the one with no class skipped", seen)
	}
}

// A classed job blocked past the delay is re-registered with one more class
// (the next Algorithm 1 ranks), as the step after it with no class rule at
// all; each step keeps the job's other constraints and says why in its meta.
func TestEscalatorWidensThenDropsTheClassRule(t *testing.T) {
	submitted := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var registered []*nomadapi.Job
	index := uint64(7)
	job := func() *nomadapi.Job {
		id, ns, name, one := "etl", "default", "a", 1
		idx, submit := index, submitted.UnixNano()
		return &nomadapi.Job{ID: &id, Name: &id, Namespace: &ns, JobModifyIndex: &idx, SubmitTime: &submit,
			Meta: map[string]string{proxy.ClassesKey: "c1", proxy.JobTypeKey: "medium"},
			Constraints: []*nomadapi.Constraint{nomadapi.NewConstraint(proxy.ClassAttribute, "set_contains_any", "c1"),
				nomadapi.NewConstraint("${attr.kernel.name}", "=", "linux")},
			TaskGroups: []*nomadapi.TaskGroup{{Name: &name, Count: &one}}}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/jobs":
			json.NewEncoder(w).Encode([]*nomadapi.JobListStub{{ID: "etl", Namespace: "default", Status: "pending",
				SubmitTime: submitted.UnixNano(), JobModifyIndex: index, Meta: job().Meta,
				JobSummary: &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"a": {Queued: 1}}}}})
		case r.URL.Path == "/v1/job/etl/evaluations", r.URL.Path == "/v1/nodes":
			w.Write([]byte("[]"))
		case r.Method == http.MethodGet && r.URL.Path == "/v1/job/etl":
			json.NewEncoder(w).Encode(job())
		case r.URL.Path == "/v1/jobs" || r.URL.Path == "/v1/job/etl":
			var req nomadapi.JobRegisterRequest
			json.NewDecoder(r.Body).Decode(&req)
			registered = append(registered, req.Job)
			index++
			json.NewEncoder(w).Encode(nomadapi.JobRegisterResponse{JobModifyIndex: index})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	client, _ := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
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
		mu.Lock()
		if err := adm.Admit(ctx, "default", "etl", index); err != nil {
			t.Fatal(err)
		}
		mu.Unlock()
		now = submitted.Add(step.at)
		if err := e.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if len(registered) == 0 {
			mu.Unlock()
			t.Fatalf("after %s: nothing re-registered", step.at)
		}
		got := registered[len(registered)-1]
		mu.Unlock()
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

func TestBlockedMeansQueuedWithNothingPlaced(t *testing.T) {
	stub := func(s nomadapi.TaskGroupSummary) *nomadapi.JobListStub {
		return &nomadapi.JobListStub{Status: "pending", JobSummary: &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"g": s}}}
	}
	if !blocked(stub(nomadapi.TaskGroupSummary{Queued: 2})) {
		t.Fatal("queued with nothing placed is blocked")
	}
	if blocked(stub(nomadapi.TaskGroupSummary{Queued: 1, Running: 1})) {
		t.Fatal("partly placed must not escalate: a new version would restart the running allocation")
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
