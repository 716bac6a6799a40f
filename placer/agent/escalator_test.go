package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/proxy"
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
	e := &escalator{view: newClusterView(client), nomad: client, delay: time.Minute, log: hclog.NewNullLogger(),
		now: func() time.Time { return submitted.Add(time.Second) }} // not due yet: no step, no write
	if err := e.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !seen["/v1/job/classed/evaluations"] || seen["/v1/job/free/evaluations"] {
		t.Fatalf("requests %v: want the classed job looked at and the one with no class skipped", seen)
	}
}
