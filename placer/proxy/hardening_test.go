package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// recordingNomad is a fake Nomad that keeps every request that reaches it
// and answers registers with a JobModifyIndex.
type recordingNomad struct {
	mu   sync.Mutex
	reqs []*http.Request
	body map[string][]byte
}

func (n *recordingNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	n.mu.Lock()
	n.reqs = append(n.reqs, r)
	n.body[r.Method+" "+r.URL.Path] = b
	n.mu.Unlock()
	io.WriteString(w, `{"EvalID":"e","JobModifyIndex":42}`)
}

func (n *recordingNomad) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.reqs)
}

type fakeAdmissions struct {
	mu   sync.Mutex
	runs map[string]uint64
	err  error
}

func (f *fakeAdmissions) Admit(_ context.Context, ns, job string, idx uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.runs[ns+"/"+job] = idx
	return nil
}

type failingClasses struct{ panics bool }

func (f failingClasses) Candidates(context.Context, string) ([]selectclass.Candidate, error) {
	if f.panics {
		panic("boom")
	}
	return nil, errors.New("consul unreachable")
}

func hardenedProxy(t *testing.T, classes ClassSource, namespaces []string) (*httptest.Server, *recordingNomad, *fakeAdmissions) {
	t.Helper()
	up := &recordingNomad{body: map[string][]byte{}}
	nomad := httptest.NewServer(up)
	t.Cleanup(nomad.Close)
	u, _ := url.Parse(nomad.URL)
	if classes == nil {
		classes = fakeClasses{{Class: "constant-1", Pattern: "constant", RoomCPU: 10000, RoomMemoryMB: 32768}}
	}
	rw := &Rewriter{Classes: classes, History: fakeHistory{}, Namespaces: namespaces,
		Thresholds: jobtype.Default(), Weights: selectclass.DefaultWeights(), Rng: rand.New(rand.NewPCG(1, 1))}
	adm := &fakeAdmissions{runs: map[string]uint64{}}
	srv := httptest.NewServer(New(u, nil, rw, hclog.NewNullLogger(), nil, Options{Admissions: adm, MaxBody: 64 << 10}))
	t.Cleanup(srv.Close)
	return srv, up, adm
}

// nomadReads decodes a forwarded body as Nomad does (encoding/json into
// its request type).
func nomadReads(t *testing.T, body []byte) *nomadapi.Job {
	t.Helper()
	var req nomadapi.JobRegisterRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Job == nil {
		t.Fatalf("forwarded body Nomad cannot read (%v): %s", err, body)
	}
	return req.Job
}

func TestNamespaceQueryCannotSkipTheRewrite(t *testing.T) {
	srv, up, _ := hardenedProxy(t, nil, []string{"batch"})
	plain := `{"Job":{"ID":"j","Namespace":"default","TaskGroups":[{"Name":"g"}]}}`
	for _, c := range []struct{ path, body, want string }{
		{"/v1/jobs?namespace=batch", plain, "batch"},                                                // the query wins in Nomad
		{"/v1/jobs", `{"Namespace":"batch","Job":{"ID":"j","TaskGroups":[{"Name":"g"}]}}`, "batch"}, // then the request's
		{"/v1/job/j?namespace=batch&namespace=default", plain, "batch"},                             // the first value, as Nomad reads it
	} {
		if code, body := put(t, srv, c.path, c.body); code != 200 {
			t.Fatalf("%s: %d %s", c.path, code, body)
		}
		path, _, _ := strings.Cut(c.path, "?")
		job := nomadReads(t, up.body["PUT "+path])
		if job.Meta[ClassesKey] == "" || *job.Namespace != c.want {
			t.Errorf("%s %s: forwarded unrewritten or to namespace %v: meta %v", c.path, c.body, *job.Namespace, job.Meta)
		}
	}
	// a job of another namespace, meta-less, is left alone
	put(t, srv, "/v1/jobs?namespace=web", plain)
	if job := nomadReads(t, up.body["PUT /v1/jobs"]); job.Meta[ClassesKey] != "" {
		t.Fatalf("namespace web rewritten: %v", job.Meta)
	}
}

func TestCaseVariantKeysCannotSkipTheRewrite(t *testing.T) {
	srv, up, _ := hardenedProxy(t, nil, nil)
	for _, body := range []string{
		`{"job":{"ID":"j","meta":{"harvest":"true"},"taskgroups":[{"name":"g"}]}}`,
		`{"JOB":{"id":"j","META":{"harvest":"true"},"TaskGroups":[{"Name":"g"}]}}`,
		`{"Job":{"ID":"j","Meta":{"harvest":"true"},"Taſkgroups":[{"Name":"g"}]}}`, // ſ folds to s in Go's decoder
		`{"\u004aob":{"ID":"j","Meta":{"harvest":"true"}}}`,
	} {
		if code, resp := put(t, srv, "/v1/jobs", body); code != 200 {
			t.Fatalf("%s: %d %s", body, code, resp)
		}
		job := nomadReads(t, up.body["PUT /v1/jobs"])
		if job.Meta["harvest"] != "true" || job.Meta[ClassesKey] == "" {
			t.Errorf("%s: Nomad would register it unrewritten: %v", body, job.Meta)
		}
	}
	// bodies Nomad would read differently from a plain reading are refused,
	// and nothing reaches Nomad
	before := up.count()
	for body, want := range map[string]string{
		`{"Job":{"ID":"j","TaskGroups":[]},"job":{"Meta":{"harvest":"true"}}}`:             `keys "Job" and "job" both name the field Job`,
		`{"Job":{"ID":"j","Meta":{},"META":{"harvest":"true"}}}`:                           `both name the field Meta`,
		`{"Job":{"Meta":{"harvest":"true"}},"Job":{"ID":"j","TaskGroups":[]}}`:             `key "Job" appears twice`,
		`{"Job":{"ID":"j","Meta":{"harvest":"false","harvest":"true"}}}`:                   `key "harvest" appears twice`,
		`{"Job":{"ID":"j"}} {"Job":{"ID":"j","Meta":{"harvest":"true"}}}`:                  "data after the JSON object",
		`{"Job":{"ID":"j","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","name":"u"}]}]}}`: `both name the field Name`,
	} {
		code, resp := put(t, srv, "/v1/jobs", body)
		if code != 400 || !strings.Contains(resp, want) {
			t.Errorf("%s: %d %s, want 400 with %q", body, code, resp, want)
		}
	}
	if up.count() != before {
		t.Fatalf("%d refused requests reached Nomad", up.count()-before)
	}
}

func TestProxyFailsClosed(t *testing.T) {
	harvested := `{"Job":{"ID":"j","Meta":{"harvest":"true"},"TaskGroups":[{"Name":"g"}]}}`
	for name, classes := range map[string]ClassSource{"error": failingClasses{}, "panic": failingClasses{panics: true}} {
		srv, up, _ := hardenedProxy(t, classes, nil)
		code, body := put(t, srv, "/v1/jobs", harvested)
		if code != 500 || !strings.Contains(body, "harvested job was not sent to Nomad") || up.count() != 0 {
			t.Errorf("%s: %d %s with %d requests at Nomad, want a 500 and none", name, code, body, up.count())
		}
		// an unharvested job still goes through
		if code, _ := put(t, srv, "/v1/jobs", `{"Job":{"ID":"web"}}`); code != 200 {
			t.Errorf("%s: unharvested job: %d", name, code)
		}
	}
	srv, up, _ := hardenedProxy(t, nil, nil)
	big := `{"Job":{"ID":"j","Meta":{"harvest":"true","pad":"` + strings.Repeat("x", 70<<10) + `"}}}`
	if code, body := put(t, srv, "/v1/jobs", big); code != http.StatusRequestEntityTooLarge || up.count() != 0 {
		t.Fatalf("oversized body: %d %s", code, body)
	}
}

func TestTokensGoToNomadUnchangedAndNoneIsAdded(t *testing.T) {
	srv, up, adm := hardenedProxy(t, nil, nil)
	send := func(path string, header http.Header) *http.Request {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+path, strings.NewReader(`{"Job":{"ID":"j","Meta":{"harvest":"true"}}}`))
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.reqs[len(up.reqs)-1]
	}
	got := send("/v1/jobs", http.Header{"X-Nomad-Token": {"caller-secret"}})
	if got.Header.Get("X-Nomad-Token") != "caller-secret" || got.Header.Get("Authorization") != "" {
		t.Fatalf("headers at Nomad: %v", got.Header)
	}
	got = send("/v1/jobs", http.Header{"Authorization": {"Bearer other"}})
	if got.Header.Get("Authorization") != "Bearer other" || got.Header.Get("X-Nomad-Token") != "" {
		t.Fatalf("headers at Nomad: %v", got.Header)
	}
	got = send("/v1/job/j/plan", http.Header{})
	if got.Header.Get("X-Nomad-Token") != "" || got.Header.Get("Authorization") != "" {
		t.Fatalf("the proxy added a token: %v", got.Header)
	}
	// a register is admitted at the index Nomad answered; a plan is not
	if adm.runs["default/j"] != 42 || len(adm.runs) != 1 {
		t.Fatalf("admissions %v", adm.runs)
	}
}

func TestAnUnrecordedAdmissionIsReported(t *testing.T) {
	srv, _, adm := hardenedProxy(t, nil, nil)
	adm.err = errors.New("consul: permission denied")
	code, body := put(t, srv, "/v1/jobs", `{"Job":{"ID":"j","Meta":{"harvest":"true"}}}`)
	if code != 500 || !strings.Contains(body, "could not record it") || !strings.Contains(body, "permission denied") {
		t.Fatalf("%d %s", code, body)
	}
}

// FuzzRewriteRequest: whatever the body and namespace query, the rewrite
// never panics, and whenever it lets a body through that Nomad would read
// as a harvested job, that job has been rewritten (it carries the class
// choice) and names the namespace Nomad will use.
func FuzzRewriteRequest(f *testing.F) {
	f.Add(dagJob, "")
	f.Add(`{"job":{"ID":"j","meta":{"harvest":"true"}}}`, "")
	f.Add(`{"Job":{"ID":"j","Namespace":"default","TaskGroups":[{"Name":"g"}]}}`, "batch")
	f.Add(`{"Namespace":"batch","Job":{"ID":"j"}}`, "")
	f.Add(`{"Job":{"ID":"j","Meta":{"harvest":"true"},"TaskGroups":[{"Name":"a","Meta":{"harvest_after":"b"}},{"Name":"b"}]}}`, "")
	rw := &Rewriter{Classes: fakeClasses{{Class: "c", Pattern: "constant", RoomCPU: 1e6, RoomMemoryMB: 1e6}}, History: fakeHistory{},
		Namespaces: []string{"batch"}, Thresholds: jobtype.Default(), Weights: selectclass.DefaultWeights(), Rng: rand.New(rand.NewPCG(1, 1))}
	f.Fuzz(func(t *testing.T, body, queryNS string) {
		out, d, err := rw.RewriteRequest(context.Background(), []byte(body), Request{Type: registerType, QueryNamespace: queryNS})
		if err != nil {
			return
		}
		var req nomadapi.JobRegisterRequest
		if json.Unmarshal(out, &req) != nil || req.Job == nil {
			return // Nomad refuses it
		}
		ns := queryNS
		if ns == "" {
			ns = req.Namespace
		}
		if ns == "" && req.Job.Namespace != nil {
			ns = *req.Job.Namespace
		}
		if ns == "" {
			ns = "default"
		}
		if req.Job.Meta["harvest"] != "true" && ns != "batch" {
			return
		}
		if d == nil || req.Job.Meta[ClassesKey] == "" || req.Job.Meta[JobTypeKey] == "" {
			t.Fatalf("Nomad would register a harvested job (namespace %q) unrewritten: %s", ns, out)
		}
		if req.Job.Namespace == nil || (*req.Job.Namespace != ns && queryNS == "") || d.Namespace != ns {
			t.Fatalf("namespace: decision %q, job %v, Nomad's %q", d.Namespace, req.Job.Namespace, ns)
		}
	})
}
