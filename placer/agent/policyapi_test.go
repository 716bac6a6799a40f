package agent

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/agent/declarations"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

func TestPolicyDocumentRoundTrip(t *testing.T) {
	a, _, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	if code, body := call(t, srv, "GET", "/v1/policy", ""); code != 404 || errorOf(body) == "" {
		t.Fatalf("no document: %d %s", code, body)
	}
	doc := `{"periodic_strength":0.3,"constant_sd":5,"class_spread":10,"max_classes":6,` +
		`"weights":{"short":{"constant":1,"periodic":1,"unpredictable":1},"long":{}},` +
		`"reserve_cpu":0.5,"reserve_memory_mb":512,"replicas":3,"diversity":"strict"}`
	for _, path := range []string{"PUT", "GET"} {
		code, body := call(t, srv, path, "/v1/policy", doc)
		if code != 200 || !sameJSON(body, doc) {
			t.Fatalf("%s: %d %s, want the document as given", path, code, body)
		}
	}
	// nothing is filled in: a partial document comes back partial
	if code, body := call(t, srv, "PUT", "/v1/policy", `{"diversity":"degraded"}`); code != 200 || body != `{"diversity":"degraded"}` {
		t.Fatalf("partial: %d %s", code, body)
	}
	for range 2 {
		if code, _ := call(t, srv, "DELETE", "/v1/policy", ""); code != 204 {
			t.Fatalf("delete: %d", code)
		}
	}
	if code, _ := call(t, srv, "GET", "/v1/policy", ""); code != 404 {
		t.Fatalf("deleted document still served: %d", code)
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

func TestPolicyDocumentRefusesBadInput(t *testing.T) {
	a, _, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	for body, want := range map[string]string{
		`{"weights":{"huge":{"constant":1}}}`:       `weights: unknown job type "huge"`,
		`{"weights":{"short":{"spiky":1}}}`:         `weights.short: unknown pattern "spiky"`,
		`{"weights":{"long":{"constant":-1}}}`:      "weights.long.constant -1: want a number >= 0",
		`{"periodic_strength":-0.1}`:                "periodic_strength -0.1",
		`{"constant_sd":-5}`:                        "constant_sd -5",
		`{"class_spread":-1}`:                       "class_spread -1",
		`{"max_classes":0}`:                         "max_classes must be at least 1, got 0",
		`{"reserve_cpu":-1}`:                        "reserve_cpu -1",
		`{"reserve_memory_mb":-512}`:                "reserve_memory_mb -512",
		`{"replicas":0}`:                            "replicas 0: want 1 to 9",
		`{"replicas":10}`:                           "replicas 10: want 1 to 9",
		`{"diversity":"loose"}`:                     `diversity "loose"`,
		`{"diversity":""}`:                          `diversity ""`,
		`{"seed":1}`:                                `unknown field "seed"`,
		`{"max_classes":2.5}`:                       "cannot unmarshal number 2.5",
		`{"weights":[]}`:                            "cannot unmarshal array",
		`"policy"`:                                  "want a JSON object",
		`{"replicas":3}{"replicas":4}`:              "found more after it",
		`{"weights":{"short":{"constant":"high"}}}`: "cannot unmarshal string",
	} {
		if code, got := call(t, srv, "PUT", "/v1/policy", body); code != 400 || !strings.Contains(errorOf(got), want) {
			t.Errorf("%s: %d %s, want 400 with %q", body, code, got, want)
		}
	}
	if code, _ := call(t, srv, "GET", "/v1/policy", ""); code != 404 {
		t.Fatalf("a refused PUT stored something: %d", code)
	}
}

func TestCorruptPolicyDocumentIs500AndStopsTheRefresh(t *testing.T) {
	a, kv, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	for value, want := range map[string]string{"{": "unexpected end", `{"replicas":12}`: "replicas 12"} {
		kv.Put("harvest/declarations/policy", []byte(value))
		if code, body := call(t, srv, "GET", "/v1/policy", ""); code != 500 || !strings.Contains(errorOf(body), `"harvest/declarations/policy"`) || !strings.Contains(errorOf(body), want) {
			t.Errorf("%s: %d %s", value, code, body)
		}
		if _, err := a.refresher.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "harvest/declarations/policy") {
			t.Errorf("refresh over a corrupt policy: %v", err)
		}
	}
}

func TestRefreshClassifiesWithTheStoredThresholds(t *testing.T) {
	a, _, nodes := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	ctx := context.Background()
	// a flat tenant (SD about 1 point) is constant under the file's 4 points
	if err := a.store.PutSeries(ctx, history.TenantID{Environment: "search", Function: "frontend"}, flat(20, 10), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	pattern := func() string {
		t.Helper()
		if _, err := a.refresher.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		return nodes.List[0].Meta[labels.PatternKey]
	}
	if p := pattern(); p != "constant" {
		t.Fatalf("with the file's thresholds: %s", p)
	}
	if code, body := call(t, srv, "PUT", "/v1/policy", `{"constant_sd":0.5}`); code != 200 {
		t.Fatalf("put: %d %s", code, body)
	}
	if p := pattern(); p != "unpredictable" {
		t.Fatalf("with constant_sd 0.5 stored the tenant is not constant, got %s", p)
	}
	call(t, srv, "DELETE", "/v1/policy", "")
	if p := pattern(); p != "constant" {
		t.Fatalf("the file's thresholds again after DELETE: %s", p)
	}
}

func TestRewriterSeesTheStoredWeights(t *testing.T) {
	a, _, _ := newTestAgent(t)
	a.set.Weights = selectclass.Weights{"medium": {"periodic": 1, "constant": 0}} // as the config file says
	a.setupDeclarations(cluster.View{})
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	rw := &proxy.Rewriter{ // wired as setupProxy wires it
		Classes: fakeCandidates{
			{Class: "constant-1", Pattern: "constant", RoomCPU: 10000, RoomMemoryMB: 32768},
			{Class: "periodic-1", Pattern: "periodic", RoomCPU: 10000, RoomMemoryMB: 32768},
		},
		History: a.store, Thresholds: jobtype.Default(), LiveWeights: a.weights, Rng: rand.New(rand.NewPCG(1, 1)),
	}
	class := func() string {
		t.Helper()
		_, d, err := rw.Rewrite(context.Background(), []byte(`{"Job":{"ID":"new","Meta":{"harvest":"true"},"TaskGroups":[{"Name":"g"}]}}`))
		if err != nil || d == nil || len(d.Outcome.Classes) != 1 {
			t.Fatalf("rewrite: %v %+v", err, d)
		}
		return d.Outcome.Classes[0]
	}
	if err := a.declared.LoadWeights(context.Background()); err != nil || class() != "periodic-1" {
		t.Fatalf("no document: the file's weights (%v)", err)
	}
	// at start, Run reads the stored document before the proxy serves
	stored := declarations.PolicyDocument{Weights: map[string]map[string]float64{"medium": {"constant": 1, "periodic": 0}}}
	if err := a.store.PutDocument(context.Background(), declarations.PolicyDocumentName, stored); err != nil {
		t.Fatal(err)
	}
	if err := a.declared.LoadWeights(context.Background()); err != nil || class() != "constant-1" {
		t.Fatalf("stored weights not loaded at start (%v)", err)
	}
	for _, step := range []struct{ method, body, want string }{
		{"PUT", `{"weights":{"long":{"constant":1}}}`, "periodic-1"}, // medium falls back to the file's
		{"PUT", `{"weights":{"medium":{"constant":1,"periodic":0}}}`, "constant-1"},
		{"DELETE", ``, "periodic-1"},
	} {
		if code, body := call(t, srv, step.method, "/v1/policy", step.body); code/100 != 2 {
			t.Fatalf("%s %s: %d %s", step.method, step.body, code, body)
		}
		for range 5 { // a medium job (never run) picks only the class with weight
			if got := class(); got != step.want {
				t.Fatalf("after %s %s: %s, want %s", step.method, step.body, got, step.want)
			}
		}
	}
	if w := a.set.Weights["medium"]; w["constant"] != 0 {
		t.Fatalf("the file's weights were modified: %v", a.set.Weights)
	}
}

type fakeCandidates []selectclass.Candidate

func (f fakeCandidates) Candidates(context.Context, string) ([]selectclass.Candidate, error) {
	return f, nil
}
