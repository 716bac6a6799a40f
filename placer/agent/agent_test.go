package agent

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/labels/labelstest"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// fakeNodes is an in-memory Nomad for the refresher.
type fakeNodes = labelstest.Nodes

// decoded is cfg as New decodes it.
func decoded(t *testing.T, cfg config.Config) config.Settings {
	t.Helper()
	s, err := cfg.Decode()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func newTestAgent(t *testing.T) (*Agent, *kv.Mem, *fakeNodes) {
	t.Helper()
	kv := kv.NewMem()
	store := history.NewStore(kv, "")
	nodes := &fakeNodes{List: []labels.Node{
		{ID: "1", Name: "a", Meta: map[string]string{labels.TenantKey: "search/frontend"}},
		{ID: "2", Name: "b", Meta: map[string]string{labels.TenantKey: "ads/indexer"}},
		{ID: "3", Name: "c", Meta: map[string]string{labels.TenantKey: "mail/store", labels.ClassKey: "stale"}},
	}}
	a := &Agent{log: hclog.NewNullLogger(), store: store, metrics: NewMetrics(), set: decoded(t, config.Default()), now: func() time.Time { return now }}
	a.refresher = &classes.Refresher{Store: store, Nodes: nodes, Config: classify.Default(), Log: hclog.NewNullLogger(), Metrics: a.metrics, Now: func() time.Time { return now }}
	a.weights = proxy.NewLiveWeights(selectclass.DefaultWeights())
	a.setupDeclarations(cluster.View{}) // no Nomad: tests that publish set a view
	return a, kv, nodes
}

func flat(level float64, days int) history.Series {
	rng := rand.New(rand.NewPCG(uint64(level), 1))
	v := make([]float64, days*history.SlotsPerDay)
	for i := range v {
		v[i] = math.Max(0, level+rng.NormFloat64())
	}
	return history.Series{Start: now.Add(-time.Duration(days) * 24 * time.Hour), Values: v}
}

func TestRefreshLabelsNodesAndSurvivesACorruptTenant(t *testing.T) {
	a, kv, nodes := newTestAgent(t)
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.store.PutSeries(ctx, history.TenantID{Environment: "search", Function: "frontend"}, flat(20, 10), []string{"a"}))
	must(a.store.PutSeries(ctx, history.TenantID{Environment: "mail", Function: "store"}, flat(50, 10), []string{"c"}))
	// ads/indexer has history, but one of its days is garbage
	must(a.store.PutSeries(ctx, history.TenantID{Environment: "ads", Function: "indexer"}, flat(30, 10), []string{"b"}))
	kv.Put("harvest/cpu/ads/indexer/"+history.DateOf(now.Add(-24*time.Hour)).String(), []byte("garbage"))
	// and search/frontend has a day older than the retention
	old := history.Series{Start: now.Add(-50 * 24 * time.Hour), Values: []float64{5}}
	must(a.store.PutSeries(ctx, history.TenantID{Environment: "search", Function: "frontend"}, old, nil))
	a.refresher.Retention = 42 * 24 * time.Hour

	table, err := a.refresher.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range nodes.List {
		got[n.Name] = n.Meta[labels.ClassKey] + "/" + n.Meta[labels.PatternKey]
	}
	if got["a"] != "constant-1/constant" || got["c"] != "constant-2/constant" || got["b"] != "unclassified/unclassified" {
		t.Fatalf("labels %v", got)
	}
	if len(table.Unclassified) != 1 || !strings.Contains(table.Unclassified[0].Reason, "harvest/cpu/ads/indexer/") {
		t.Fatalf("unclassified %+v", table.Unclassified)
	}
	if pairs, _ := kv.List(ctx, "harvest/cpu/search/frontend/"+history.DateOf(old.Start).String()); len(pairs) != 0 {
		t.Fatalf("day older than the retention kept")
	}
	if pairs, _ := kv.List(ctx, "harvest/cpu/search/frontend/"); len(pairs) != 11 {
		t.Fatalf("%d days of search/frontend kept, want the 11 recent ones", len(pairs))
	}
	var stored api.ClassTable
	if ok, err := a.store.GetDocument(ctx, contract.ClassesDocument, &stored); !ok || err != nil || stored.NodeCounts["constant-1"] != 1 {
		t.Fatalf("stored table %+v (%v, %v)", stored, ok, err)
	}
	for i, c := range table.Classes {
		if len(c.Nodes) != stored.NodeCounts[c.Name] {
			t.Errorf("class %s lists nodes %v, but %d nodes carry its label", c.Name, c.Nodes, stored.NodeCounts[c.Name])
		}
		if len(stored.Classes[i].Nodes) != 0 {
			t.Errorf("the stored class %s keeps node names %v (the value must stay small)", c.Name, stored.Classes[i].Nodes)
		}
	}
}

func TestIngestAPI(t *testing.T) {
	a, _, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/v1/history/samples", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		b, _ := json.Marshal(out)
		return resp.StatusCode, string(b)
	}
	ok := `{"tenant":"search/frontend","samples":[{"node":"a","time":"2026-11-20T11:58:00Z","cpu_percent":12.5}]}`
	if code, body := post(ok); code != 200 || !strings.Contains(body, `"accepted":1`) {
		t.Fatalf("good batch: %d %s", code, body)
	}
	bad := map[string]string{
		`{"tenant":"search","samples":[]}`: "want environment/function",
		`{"tenant":"a/b","samples":[{"node":"a","time":"2026-11-20T11:58:00Z","cpu_percent":-4}]}`:  "outside 0-100",
		`{"tenant":"a/b","samples":[{"node":"a","time":"2026-11-20T11:58:00Z","cpu_percent":140}]}`: "outside 0-100",
		`{"tenant":"a/b","samples":[{"node":"","time":"2026-11-20T11:58:00Z","cpu_percent":4}]}`:    "node",
		`{"tenant":"a/b","samples":[{"node":"a","cpu_percent":4}]}`:                                 "outside the history's window",
		`{"tenant":"a/b","extra":1}`: "unknown field",
		`{"tenant":`:                 "unexpected EOF",
	}
	for body, want := range bad {
		if code, got := post(body); code != 400 || !strings.Contains(got, want) {
			t.Errorf("%s: %d %s, want 400 with %q", body, code, got, want)
		}
	}
	resp, err := http.Get(srv.URL + "/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("metrics: %s", resp.Status)
	}
}
