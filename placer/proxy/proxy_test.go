package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

type fakeClasses []selectclass.Candidate

func (f fakeClasses) Candidates(context.Context, string) ([]selectclass.Candidate, error) {
	return f, nil
}

type fakeHistory map[string]time.Duration

func (f fakeHistory) LastJobRun(_ context.Context, ns, job string) (history.JobRun, bool, error) {
	d, ok := f[ns+"/"+job]
	return history.JobRun{Duration: d}, ok, nil
}

// upstream is a fake Nomad that records what reaches it.
type upstream struct {
	mu     sync.Mutex
	bodies map[string][]byte
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies[r.Method+" "+r.URL.Path] = body
	u.mu.Unlock()
	if r.URL.Path == "/v1/event/stream" {
		w.(http.Flusher).Flush()
		io.WriteString(w, "{}\n")
		return
	}
	io.WriteString(w, `{"EvalID":"x"}`)
}

func newTestProxy(t testing.TB) (*httptest.Server, *upstream) {
	up := &upstream{bodies: map[string][]byte{}}
	nomad := httptest.NewServer(up)
	t.Cleanup(nomad.Close)
	u, _ := url.Parse(nomad.URL)
	rw := &Rewriter{
		Classes: fakeClasses{
			{Class: "constant-1", Pattern: "constant", RoomCPU: 10000, RoomMemoryMB: 32768},
			{Class: "periodic-1", Pattern: "periodic", RoomCPU: 10000, RoomMemoryMB: 32768},
		},
		History:    fakeHistory{"default/etl": 20 * time.Minute},
		Thresholds: jobtype.Default(), Weights: selectclass.DefaultWeights(), Rng: rand.New(rand.NewPCG(1, 1)),
	}
	srv := httptest.NewServer(New(u, nil, rw, hclog.NewNullLogger(), nil))
	t.Cleanup(srv.Close)
	return srv, up
}

const dagJob = `{"Job":{"ID":"etl","Name":"etl","Type":"batch","Meta":{"harvest":"true"},"Unknown":{"kept":1},
 "TaskGroups":[
  {"Name":"extract","Count":4,"Tasks":[{"Name":"t","Driver":"harvest","Resources":{"CPU":500,"MemoryMB":256}}]},
  {"Name":"transform","Count":2,"Meta":{"harvest_after":"extract"},"RestartPolicy":{"Attempts":2,"Mode":"delay"},
   "Tasks":[{"Name":"t","Driver":"harvest","Resources":{"CPU":1000,"MemoryMB":512}}]},
  {"Name":"load","Count":1,"Meta":{"harvest_after":"transform"},"Tasks":[{"Name":"t","Driver":"harvest"}]}]}}`

func put(t *testing.T, srv *httptest.Server, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHarvestedJobIsRewritten(t *testing.T) {
	srv, up := newTestProxy(t)
	if code, body := put(t, srv, "/v1/jobs", dagJob); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	var got struct{ Job map[string]any }
	if err := json.Unmarshal(up.bodies["PUT /v1/jobs"], &got); err != nil {
		t.Fatal(err)
	}
	job := got.Job
	meta := job["Meta"].(map[string]any)
	if meta[JobTypeKey] != "long" || meta[ClassesKey] != "constant-1" && meta[ClassesKey] != "periodic-1" {
		t.Fatalf("meta %v", meta)
	}
	if !strings.Contains(meta[EstimateKey].(string), `"cpu_mhz":2000`) || !strings.Contains(meta[StagesKey].(string), `"transform":2`) {
		t.Fatalf("estimate/stages %v", meta)
	}
	c := job["Constraints"].([]any)[0].(map[string]any)
	if c["LTarget"] != ClassAttribute || c["Operand"] != "set_contains_any" || c["RTarget"] != meta[ClassesKey] {
		t.Fatalf("constraint %v", c)
	}
	groups := job["TaskGroups"].([]any)
	extract, transform, load := groups[0].(map[string]any), groups[1].(map[string]any), groups[2].(map[string]any)
	if extract["Count"].(float64) != 4 || transform["Count"].(float64) != 0 || load["Count"].(float64) != 0 {
		t.Fatalf("counts %v %v %v", extract["Count"], transform["Count"], load["Count"])
	}
	if extract["RestartPolicy"].(map[string]any)["Attempts"].(float64) != 0 {
		t.Fatalf("restart policy not set: %v", extract["RestartPolicy"])
	}
	if transform["RestartPolicy"].(map[string]any)["Attempts"].(float64) != 2 {
		t.Fatalf("the user's restart policy was overwritten: %v", transform["RestartPolicy"])
	}
	if job["Unknown"] == nil {
		t.Fatal("a field the proxy does not know was dropped")
	}
}

// With Affinity the classes become a Nomad affinity; a job no class fits
// gets no class rule at all.
func TestAffinityPlacement(t *testing.T) {
	decision := &Decision{Outcome: api.ClassChoice{Classes: []string{"constant-1", "periodic-2"}}}
	job := map[string]any{"Constraints": []any{map[string]any{"LTarget": "${attr.kernel.name}"}}}
	apply(job, decision, true)
	a := job["Affinities"].([]any)[0].(map[string]any)
	if a["RTarget"] != "constant-1,periodic-2" || a["Operand"] != "set_contains_any" || a["Weight"] != 100 || len(job["Constraints"].([]any)) != 1 {
		t.Fatalf("affinity %v, constraints %v", a, job["Constraints"])
	}
	none := map[string]any{}
	apply(none, &Decision{}, true)
	if none["Constraints"] != nil || none["Affinities"] != nil || none["Meta"].(map[string]any)[ClassesKey] != NoClass {
		t.Fatalf("no fit: %v", none)
	}
}

// A job no class fits is forwarded at once with no class constraint or
// affinity (Algorithm 1, lines 15-17; Section 5: RM-H's default policy),
// its meta saying so and why, with the eviction policies and deferred
// stages of any harvested job.
func TestJobNoClassFitsIsForwardedUnconstrained(t *testing.T) {
	for _, affinity := range []bool{false, true} {
		srv, up := newTestProxy(t)
		srv.Config.Handler.(*Proxy).rewriter.Classes = fakeClasses{
			{Class: "constant-1", Pattern: "constant", RoomCPU: 1000, RoomMemoryMB: 32768}, // the job needs 4 x 500 MHz
		}
		srv.Config.Handler.(*Proxy).rewriter.Affinity = affinity
		if code, body := put(t, srv, "/v1/jobs", dagJob); code != 200 {
			t.Fatalf("register: %d %s", code, body)
		}
		var got struct{ Job map[string]any }
		if err := json.Unmarshal(up.bodies["PUT /v1/jobs"], &got); err != nil {
			t.Fatal(err)
		}
		job := got.Job
		meta := job["Meta"].(map[string]any)
		if job["Constraints"] != nil || job["Affinities"] != nil {
			t.Fatalf("affinity=%v: class rules on a job no class fits: %v %v", affinity, job["Constraints"], job["Affinities"])
		}
		if meta[ClassesKey] != NoClass || !strings.Contains(meta[ReasonKey].(string), "only 1000 MHz") || meta[StagesKey] == nil {
			t.Fatalf("affinity=%v: meta %v", affinity, meta)
		}
		extract := job["TaskGroups"].([]any)[0].(map[string]any)
		if extract["RestartPolicy"].(map[string]any)["Attempts"].(float64) != 0 || extract["ReschedulePolicy"] == nil {
			t.Fatalf("affinity=%v: eviction policies %v", affinity, extract)
		}
	}
}

func TestOtherRequestsPassUntouched(t *testing.T) {
	srv, up := newTestProxy(t)
	plain := `{"Job":{"ID":"web","TaskGroups":[{"Name":"g","Count":3}]},"EnforceIndex":false}`
	put(t, srv, "/v1/jobs", plain)
	if string(up.bodies["PUT /v1/jobs"]) != plain {
		t.Fatalf("non-harvested job changed: %s", up.bodies["PUT /v1/jobs"])
	}
	put(t, srv, "/v1/job/etl/dispatch", `{"Meta":{"harvest":"true"}}`)
	if string(up.bodies["PUT /v1/job/etl/dispatch"]) != `{"Meta":{"harvest":"true"}}` {
		t.Fatal("a non-job endpoint was touched")
	}
	resp, err := http.Get(srv.URL + "/v1/event/stream")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "{}\n" {
		t.Fatalf("stream body %q", b)
	}
}

func TestBadDAGIsRefusedNamingTheGroup(t *testing.T) {
	srv, _ := newTestProxy(t)
	bad := strings.Replace(dagJob, `"Count":4,"Tasks"`, `"Count":4,"Meta":{"harvest_after":"load"},"Tasks"`, 1)
	code, body := put(t, srv, "/v1/job/etl/plan", bad)
	if code != 400 || !strings.Contains(body, `task group "extract": is in a cycle of harvest_after (extract, load, transform)`) {
		t.Fatalf("cycle: %d %s", code, body)
	}
	code, body = put(t, srv, "/v1/validate/job", strings.Replace(dagJob, `"harvest_after":"transform"`, `"harvest_after":"nope"`, 1))
	if code != 400 || !strings.Contains(body, `task group "load": harvest_after names "nope"`) {
		t.Fatalf("unknown upstream: %d %s", code, body)
	}
	if code, body := put(t, srv, "/v1/jobs", `{"Job":`); code != 400 || !strings.Contains(body, "not a JSON object") {
		t.Fatalf("malformed JSON: %d %s", code, body)
	}
}

// BenchmarkProxyRegister compares a job register through the proxy (with
// the rewrite) against the same request sent straight to the fake Nomad.
func BenchmarkProxyRegister(b *testing.B) {
	srv, _ := newTestProxy(b)
	up := httptest.NewServer(&upstream{bodies: map[string][]byte{}})
	defer up.Close()
	send := func(b *testing.B, base string) {
		for i := 0; i < b.N; i++ {
			resp, err := http.Post(base+"/v1/jobs", "application/json", bytes.NewReader([]byte(dagJob)))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) { send(b, up.URL) })
	b.Run("proxy", func(b *testing.B) { send(b, srv.URL) })
}

type decisionsKept struct {
	mu   sync.Mutex
	kept []*Decision
}

func (d *decisionsKept) Record(_ context.Context, dec *Decision) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kept = append(d.kept, dec)
	return nil
}

// A register keeps its decision for harvestctl explain, with every class
// Algorithm 1 weighed; a plan or a validate keeps nothing.
func TestARegisteredJobsDecisionIsKept(t *testing.T) {
	up := &upstream{bodies: map[string][]byte{}}
	nomad := httptest.NewServer(up)
	t.Cleanup(nomad.Close)
	u, _ := url.Parse(nomad.URL)
	kept := &decisionsKept{}
	rw := &Rewriter{Classes: fakeClasses{{Class: "constant-1", Pattern: "constant", RoomCPU: 10000, RoomMemoryMB: 32768},
		{Class: "periodic-1", Pattern: "periodic", RoomCPU: 100, RoomMemoryMB: 32768}},
		History: fakeHistory{}, Thresholds: jobtype.Default(), Weights: selectclass.DefaultWeights(), Rng: rand.New(rand.NewPCG(1, 1)),
		Decisions: kept}
	srv := httptest.NewServer(New(u, nil, rw, hclog.NewNullLogger(), nil))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/v1/job/etl/plan", "/v1/validate/job", "/v1/jobs"} {
		if code, body := put(t, srv, path, dagJob); code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	if len(kept.kept) != 1 {
		t.Fatalf("kept %d decisions, want the register's only", len(kept.kept))
	}
	d := kept.kept[0]
	if d.Job != "etl" || d.Namespace != "default" || d.At.IsZero() || len(d.Outcome.Considered) != 2 || d.Outcome.Classes[0] != "constant-1" {
		t.Fatalf("decision %+v", d)
	}
	if c := d.Outcome.Considered[1]; c.Class != "periodic-1" || c.Fits {
		t.Fatalf("periodic-1 with 100 MHz of room fits a 2000 MHz peak: %+v", c)
	}
}

// With NoClasses (class_placement = "none", the paper's PT) a harvested job
// gets no class rule though a class fits, and the rest of the rewrite stays:
// the downstream stage deferred, restart and reschedule, the reason in meta.
func TestNoClassesLeavesAJobUntiedToClasses(t *testing.T) {
	rw := &Rewriter{Classes: fakeClasses{{Class: "constant-1", Pattern: "constant", RoomCPU: 10000, RoomMemoryMB: 32768}},
		History: fakeHistory{}, Thresholds: jobtype.Default(), Weights: selectclass.DefaultWeights(), Rng: rand.New(rand.NewPCG(1, 1)),
		NoClasses: true}
	out, d, err := rw.Rewrite(context.Background(), []byte(dagJob))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Outcome.Classes) != 0 || d.Outcome.Reason != NoClassesReason || len(d.Deferred) == 0 {
		t.Fatalf("decision %+v", d)
	}
	var tree struct{ Job map[string]any }
	if err := json.Unmarshal(out, &tree); err != nil {
		t.Fatal(err)
	}
	if c := tree.Job["Constraints"]; c != nil {
		t.Fatalf("constraints %v, want none", c)
	}
	if a := tree.Job["Affinities"]; a != nil {
		t.Fatalf("affinities %v, want none", a)
	}
	meta := tree.Job["Meta"].(map[string]any)
	if meta[ClassesKey] != NoClass || meta[ReasonKey] != NoClassesReason {
		t.Fatalf("meta %v", meta)
	}
	// evicted or refused work is rescheduled without limit, backing off
	for _, g := range tree.Job["TaskGroups"].([]any) {
		r, _ := g.(map[string]any)["ReschedulePolicy"].(map[string]any)
		if r["Unlimited"] != true || r["DelayFunction"] != "exponential" || r["MaxDelay"].(float64) != 60e9 {
			t.Fatalf("group %v: reschedule %v", g, r)
		}
	}
}
