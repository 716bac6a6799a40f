package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/survival"
)

// GET /v1/classes serves the refresher's table (placer/agent/classes) with
// each class's nodes and survival figures, in api's types.
func TestClassesAPIServesSurvival(t *testing.T) {
	a, _, nodes := newTestAgent(t)
	ctx := context.Background()
	for i, tenant := range []string{"search/frontend", "ads/indexer", "mail/store"} {
		id, _ := history.ParseTenantID(tenant)
		if err := a.store.PutSeries(ctx, id, flat(20+15*float64(i), 10), []string{nodes.List[i].Name}); err != nil {
			t.Fatal(err)
		}
		nodes.List[i].Attributes = map[string]string{contract.AttrCapacityCores: "16", contract.AttrReserveCores: "4", contract.AttrAdmitMarginCores: "1"}
	}
	nodes.List[2].Attributes = nil // mail/store's only node has no harvest driver
	a.refresher.JobTypes = jobtype.Thresholds{Short: 2 * time.Minute, Long: 10 * time.Minute}
	if _, err := a.refresher.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	lists := nodes.Lists
	for range 3 { // each node is one Nomad read: a GET must not list them all again
		resp, err := http.Get(srv.URL + "/v1/classes")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if nodes.Lists != lists {
		t.Errorf("3 GET /v1/classes listed Nomad's nodes %d times, want none after the refresh", nodes.Lists-lists)
	}
	resp, err := http.Get(srv.URL + "/v1/classes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// the API's own type decodes every field the placer serves
	var got api.ClassTable
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil || len(got.Classes) != 3 {
		t.Fatalf("%s: %+v (%v)", resp.Status, got, err)
	}
	for _, c := range got.Classes {
		if len(c.Nodes) != 1 {
			t.Errorf("GET /v1/classes: class %s lists nodes %v, want the one node of its one tenant", c.Name, c.Nodes)
		}
		if c.Tenants[0] == "mail/store" {
			if c.Survival != nil || c.SurvivalUnavailable == "" {
				t.Errorf("%s: %+v, want no figures and the reason", c.Name, c)
			}
			continue
		}
		if len(c.Survival) != len(survival.DefaultLengths()) {
			t.Fatalf("%s: survival %+v", c.Name, c.Survival)
		}
		for _, p := range c.Survival {
			if p.Probability == nil || *p.Probability < 0 || *p.Probability > 1 || p.Tasks == 0 {
				t.Errorf("%s at %s: %+v, want a probability from replayed tasks", c.Name, p.Length, p)
			}
		}
		if c.SurvivalByJobType["short"].Length != 2*time.Minute || c.SurvivalByJobType["medium"].Length != 10*time.Minute || c.SurvivalByJobType["long"].Length != 20*time.Minute {
			t.Errorf("%s: by job type %+v, want the configured 2m and 10m thresholds", c.Name, c.SurvivalByJobType)
		}
	}
}
