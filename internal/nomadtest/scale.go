package nomadtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// ScaleNomad is a Nomad HTTP API at datacenter scale for the placer's
// loops: nodes carrying tenants and the driver's attributes, harvested
// DAG jobs the proxy rewrote, each with running allocations, and Nomad's
// blocking queries on the node, job and allocation lists (a request with
// ?index= at or past the list's index waits until it changes or ?wait=
// ends). It counts every request by kind. A test holds Mu while it changes
// Nodes, Jobs or Allocs of a served fake (and Bumps the lists it changed).
type ScaleNomad struct {
	Mu      sync.Mutex
	changed *sync.Cond
	index   uint64 // raft index: every write bumps it
	listIdx map[string]uint64
	Nodes   []*nomadapi.Node
	// Jobs are listed with their Status ("running" when unset) and the
	// summary Summaries holds for them (two running allocations of group
	// "a" when none).
	Jobs      []*nomadapi.Job
	Summaries map[string]*nomadapi.JobSummary
	Allocs    []*nomadapi.AllocationListStub
	// Registered are the jobs registered through the API, in order; each
	// replaces the job of its ID with a new JobModifyIndex. JobWrites are
	// the registrations and deregistrations ("register <id>", "deregister
	// <id>"), in order; a deregistration stops its job, or with purge
	// removes it.
	Registered []*nomadapi.Job
	JobWrites  []string
	// PlanUpdates are what a plan of a job (by ID) says its groups' updates
	// would be (none: an empty plan).
	PlanUpdates map[string]map[string]*nomadapi.DesiredUpdates
	// AllocListing, when set, answers the n-th plain allocation listing
	// (from 1; an error answers 500 with its text) instead of Allocs, and
	// Filters the filter expressions such a listing may carry (another one
	// answers 400); AllocQueries are the listings' queries, in order.
	AllocListing func(n int) ([]*nomadapi.AllocationListStub, error)
	Filters      map[string]func(*nomadapi.AllocationListStub) bool
	AllocQueries []url.Values
	// Drains are the drain requests, NodeWrites every node write as "drain
	// <id>" or "eligibility <id>", in order; a drain makes its node
	// ineligible, as Nomad does.
	Drains     []nomadapi.NodeUpdateDrainRequest
	NodeWrites []string
	calls      map[string]int
	paths      map[string]int
	down       bool // every request answers 503, blocked ones at once
}

// NewScaleNomad is a cluster of nodes nodes (node-0000...) and jobs
// harvested DAG jobs (etl-000...), each with two running allocations.
func NewScaleNomad(nodes, jobs int) *ScaleNomad {
	f := &ScaleNomad{index: 100, listIdx: map[string]uint64{"nodes": 100, "jobs": 100, "allocs": 100}, calls: map[string]int{},
		paths: map[string]int{}, Summaries: map[string]*nomadapi.JobSummary{}}
	f.changed = sync.NewCond(&f.Mu)
	for i := range nodes {
		id := fmt.Sprintf("node-%04d", i)
		f.Nodes = append(f.Nodes, &nomadapi.Node{ID: id, Name: id, Status: "ready", SchedulingEligibility: "eligible",
			ModifyIndex: 100, Meta: map[string]string{labels.TenantKey: fmt.Sprintf("svc-%d/%s", i%50, id), labels.ClassKey: "c1"},
			Attributes: map[string]string{contract.AttrCapacityMemory: "65536MiB", contract.AttrReserveMemory: "16384MiB"}})
	}
	for i := range jobs {
		id := fmt.Sprintf("etl-%03d", i)
		ns, two, name := "default", 2, "a"
		idx, submit := uint64(100), time.Now().Add(-time.Minute).UnixNano()
		f.Jobs = append(f.Jobs, &nomadapi.Job{ID: &id, Name: &id, Namespace: &ns, JobModifyIndex: &idx, ModifyIndex: &idx, SubmitTime: &submit,
			Meta:       map[string]string{proxy.JobTypeKey: "medium", proxy.ClassesKey: "c1"},
			TaskGroups: []*nomadapi.TaskGroup{{Name: &name, Count: &two}}})
		for k := range 2 {
			f.Allocs = append(f.Allocs, &nomadapi.AllocationListStub{ID: fmt.Sprintf("%s-%d", id, k), JobID: id, Namespace: ns,
				TaskGroup: "a", NodeID: f.Nodes[(2*i+k)%nodes].ID, ClientStatus: "running", DesiredStatus: "run",
				CreateIndex: 100, ModifyIndex: 100, ModifyTime: time.Now().UnixNano()})
		}
	}
	return f
}

// Bump records a write to the named lists ("nodes", "jobs", "allocs"),
// waking their blocking queries, and returns its index; Mu held.
func (f *ScaleNomad) Bump(lists ...string) uint64 {
	f.index++
	for _, l := range lists {
		f.listIdx[l] = f.index
	}
	f.changed.Broadcast()
	return f.index
}

// GoDown makes Nomad answer every request, blocked ones too, with 503.
func (f *ScaleNomad) GoDown() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.down = true
	f.changed.Broadcast()
}

// CompleteAlloc marks one allocation complete, as a client would report it.
func (f *ScaleNomad) CompleteAlloc(i int) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	a := f.Allocs[i]
	a.ClientStatus, a.ModifyIndex, a.ModifyTime = "complete", f.Bump("allocs"), time.Now().UnixNano()
}

// Total is how many requests the fake answered.
func (f *ScaleNomad) Total() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// Snapshot is how many requests of each kind ("GET /v1/nodes", "GET
// /v1/allocations (blocking)", ...) the fake answered.
func (f *ScaleNomad) Snapshot() map[string]int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := make(map[string]int, len(f.calls))
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

// Requests is how many requests the fake answered for one method and path
// ("GET /v1/job/etl/evaluations").
func (f *ScaleNomad) Requests(methodPath string) int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.paths[methodPath]
}

// block waits, with f.Mu held, while a blocking query's index is current.
func (f *ScaleNomad) block(r *http.Request, list string) {
	min, err := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	if err != nil || min == 0 {
		return
	}
	wait, err := time.ParseDuration(r.URL.Query().Get("wait"))
	if err != nil || wait <= 0 {
		wait = 5 * time.Minute
	}
	deadline := time.Now().Add(wait)
	stop := time.AfterFunc(wait, func() { f.Mu.Lock(); f.changed.Broadcast(); f.Mu.Unlock() })
	defer stop.Stop()
	done := wakeOnCancel(r, f)
	defer done()
	for f.listIdx[list] <= min && time.Now().Before(deadline) && r.Context().Err() == nil && !f.down {
		f.changed.Wait()
	}
}

// ListIndex is the index of the named list's last write.
func (f *ScaleNomad) ListIndex(list string) uint64 {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.listIdx[list]
}

// wakeOnCancel wakes the waiters when the request is cancelled.
func wakeOnCancel(r *http.Request, f *ScaleNomad) func() {
	stop := make(chan struct{})
	go func() {
		select {
		case <-r.Context().Done():
			f.Mu.Lock()
			f.changed.Broadcast()
			f.Mu.Unlock()
		case <-stop:
		}
	}()
	return func() { close(stop) }
}

// ServeHTTP answers as Nomad's HTTP API does, counting the request.
func (f *ScaleNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	path := r.URL.Path
	kind := r.Method + " " + path
	switch {
	case strings.HasPrefix(path, "/v1/node/"):
		kind = r.Method + " /v1/node/:id"
	case strings.HasPrefix(path, "/v1/job/"):
		kind = r.Method + " /v1/job/:id"
		if i := strings.LastIndex(path, "/"); i > len("/v1/job") && strings.Count(path, "/") > 3 {
			kind += path[i:]
		}
	}
	if r.URL.Query().Get("index") != "" {
		kind += " (blocking)"
	}
	f.calls[kind]++
	f.paths[r.Method+" "+path]++
	if f.down {
		http.Error(w, "Nomad is down", http.StatusServiceUnavailable)
		return
	}
	reply := func(v any, index uint64) {
		w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.Method == http.MethodGet && path == "/v1/nodes":
		f.block(r, "nodes")
		stubs := make([]*nomadapi.NodeListStub, 0, len(f.Nodes))
		for _, n := range f.Nodes {
			stubs = append(stubs, &nomadapi.NodeListStub{ID: n.ID, Name: n.Name, Status: n.Status,
				SchedulingEligibility: n.SchedulingEligibility, ModifyIndex: n.ModifyIndex})
		}
		reply(stubs, f.listIdx["nodes"])
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/node/"):
		for _, n := range f.Nodes {
			if n.ID == strings.TrimPrefix(path, "/v1/node/") {
				reply(n, n.ModifyIndex)
				return
			}
		}
		http.Error(w, "node not found", http.StatusNotFound)
	case r.Method == http.MethodPost && path == "/v1/client/metadata":
		var req nomadapi.NodeMetaApplyRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		for _, n := range f.Nodes {
			if n.ID == req.NodeID {
				for k, v := range req.Meta {
					if v == nil {
						delete(n.Meta, k)
					} else {
						n.Meta[k] = *v
					}
				}
				n.ModifyIndex = f.Bump("nodes")
				reply(nomadapi.NodeMetaResponse{Meta: n.Meta}, n.ModifyIndex)
				return
			}
		}
		http.Error(w, "node not found", http.StatusNotFound)
	case r.Method == http.MethodGet && path == "/v1/jobs":
		f.block(r, "jobs")
		stubs := make([]*nomadapi.JobListStub, 0, len(f.Jobs))
		for _, j := range f.Jobs {
			sum := f.Summaries[*j.ID]
			if sum == nil {
				sum = &nomadapi.JobSummary{JobID: *j.ID, Summary: map[string]nomadapi.TaskGroupSummary{"a": {Running: 2}}}
			}
			status := "running"
			if j.Status != nil {
				status = *j.Status
			}
			stubs = append(stubs, &nomadapi.JobListStub{ID: *j.ID, Name: value(j.Name), Namespace: value(j.Namespace), Meta: j.Meta,
				Status: status, Stop: value(j.Stop), JobModifyIndex: value(j.JobModifyIndex), ModifyIndex: value(j.ModifyIndex), SubmitTime: value(j.SubmitTime),
				JobSummary: sum})
		}
		reply(stubs, f.listIdx["jobs"])
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/allocations") && strings.HasPrefix(path, "/v1/job/"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/v1/job/"), "/allocations")
		var out []*nomadapi.AllocationListStub
		for _, a := range f.Allocs {
			if a.JobID == id {
				out = append(out, a)
			}
		}
		reply(out, f.listIdx["allocs"])
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/evaluations"):
		reply([]*nomadapi.Evaluation{}, f.index)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/job/"):
		for _, j := range f.Jobs {
			if *j.ID == strings.TrimPrefix(path, "/v1/job/") {
				reply(j, *j.ModifyIndex)
				return
			}
		}
		http.Error(w, "job not found", http.StatusNotFound)
	case (r.Method == http.MethodPost || r.Method == http.MethodPut) && strings.HasPrefix(path, "/v1/job/") && strings.HasSuffix(path, "/plan"):
		f.plan(w, r, reply)
	case (r.Method == http.MethodPost || r.Method == http.MethodPut) && (path == "/v1/jobs" || strings.HasPrefix(path, "/v1/job/")):
		f.register(w, r, reply)
	case r.Method == http.MethodDelete && strings.HasPrefix(path, "/v1/job/"):
		f.deregister(w, r, reply)
	case r.Method == http.MethodPut && strings.HasPrefix(path, "/v1/node/"):
		f.nodeWrite(w, r, reply)
	case r.Method == http.MethodGet && path == "/v1/allocations" && f.AllocListing != nil:
		f.listAllocs(w, r, reply)
	case r.Method == http.MethodGet && path == "/v1/allocations":
		f.block(r, "allocs")
		if f.down {
			http.Error(w, "Nomad is down", http.StatusServiceUnavailable)
			return
		}
		reply(f.Allocs, f.listIdx["allocs"])
	default:
		http.Error(w, "not in the fake: "+kind, http.StatusNotFound)
	}
}

// value is *p, or T's zero value for nil.
func value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Serve serves the fake until the test ends and returns a client of it.
func (f *ScaleNomad) Serve(t testing.TB) *nomadapi.Client { return Serve(t, f) }

// Serve serves a fake Nomad API until the test ends and returns a client
// of it.
func Serve(t testing.TB, fake http.Handler) *nomadapi.Client {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// Meta returns one node's meta value as the fake holds it.
func (f *ScaleNomad) Meta(node, key string) string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for _, n := range f.Nodes {
		if n.ID == node {
			return n.Meta[key]
		}
	}
	return ""
}

// AddAlloc adds an allocation (of its JobID on its NodeID).
func (f *ScaleNomad) AddAlloc(a *nomadapi.AllocationListStub) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	a.Namespace, a.NodeName = "default", a.NodeID
	a.ModifyIndex, a.ModifyTime = f.Bump("allocs"), time.Now().UnixNano()
	f.Allocs = append(f.Allocs, a)
}

// MetaWrites is how many meta applies the fake answered.
func (f *ScaleNomad) MetaWrites() int { return f.Snapshot()["POST /v1/client/metadata"] }
