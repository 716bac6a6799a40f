package sequencer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// stageNomad is a fake Nomad holding DAG jobs (group a, then b) whose
// first group has completed, and recording every write the sequencer
// makes.
type stageNomad struct {
	mu     sync.Mutex
	stubs  []*nomadapi.JobListStub
	writes []string // "PUT <job id>" of registers, "DELETE <job id>"
	reads  map[string]int
	// allocsOfA, when set, are group a's allocations of each job instead
	// of one that completed; unlimited makes group a reschedule forever.
	allocsOfA func(job string) []*nomadapi.AllocationListStub
	unlimited bool
}

func dagStub(id string, index uint64, meta map[string]string) *nomadapi.JobListStub {
	return &nomadapi.JobListStub{ID: id, Namespace: "default", JobModifyIndex: index, Status: "running",
		SubmitTime: time.Now().Add(-time.Hour).UnixNano(), Meta: meta}
}

func (n *stageNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && path == "/v1/jobs":
		_ = json.NewEncoder(w).Encode(n.stubs)
	case r.Method == http.MethodPut && path == "/v1/jobs":
		var req nomadapi.JobRegisterRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		n.writes = append(n.writes, "PUT "+*req.Job.ID)
		_ = json.NewEncoder(w).Encode(nomadapi.JobRegisterResponse{JobModifyIndex: 100})
	case r.Method == http.MethodDelete:
		n.writes = append(n.writes, "DELETE "+strings.TrimPrefix(path, "/v1/job/"))
		_ = json.NewEncoder(w).Encode(nomadapi.JobDeregisterResponse{})
	case r.Method == http.MethodGet && path == "/v1/allocations": // every job's group a is complete
		var out []*nomadapi.AllocationListStub
		for _, s := range n.stubs {
			if n.allocsOfA != nil {
				out = append(out, n.allocsOfA(s.ID)...)
				continue
			}
			out = append(out, &nomadapi.AllocationListStub{JobID: s.ID, Namespace: s.Namespace, TaskGroup: "a",
				ClientStatus: "complete", CreateIndex: 1000, ModifyTime: time.Now().UnixNano()})
		}
		_ = json.NewEncoder(w).Encode(out)
	case strings.HasPrefix(path, "/v1/job/"):
		id := strings.TrimPrefix(path, "/v1/job/")
		n.reads[id]++
		if strings.Contains(id, ".") { // no stage job registered yet
			http.Error(w, "job not found", http.StatusNotFound)
			return
		}
		for _, s := range n.stubs {
			if s.ID == id {
				one, zero := 1, 0
				a, b := "a", "b"
				groupA := &nomadapi.TaskGroup{Name: &a, Count: &one}
				if n.unlimited {
					groupA.ReschedulePolicy = &nomadapi.ReschedulePolicy{Unlimited: &n.unlimited}
				}
				_ = json.NewEncoder(w).Encode(nomadapi.Job{ID: &s.ID, Name: &s.ID, Namespace: &s.Namespace, Meta: s.Meta,
					JobModifyIndex: &s.JobModifyIndex, SubmitTime: &s.SubmitTime,
					TaskGroups: []*nomadapi.TaskGroup{groupA, {Name: &b, Count: &zero, Meta: map[string]string{"harvest_after": "a"}}}})
				return
			}
		}
		http.NotFound(w, r)
	default:
		io.WriteString(w, "{}")
	}
}

// admittedSequencer is a sequencer over the fake Nomad with the given runs
// (job -> JobModifyIndex) admitted.
func admittedSequencer(t *testing.T, nomad *stageNomad, runs map[string]uint64) (*Sequencer, admissions.Store) {
	t.Helper()
	srv := httptest.NewServer(nomad)
	t.Cleanup(srv.Close)
	client, _ := nomadapi.NewClient(&nomadapi.Config{Address: srv.URL})
	store := history.NewStore(kv.NewMem(), "harvest/")
	adm := admissions.New(store)
	for job, idx := range runs {
		if err := adm.Admit(context.Background(), "default", job, idx); err != nil {
			t.Fatal(err)
		}
	}
	return &Sequencer{nomad: client, view: cluster.New(client), store: store, log: hclog.NewNullLogger(), done: map[string]bool{},
		admitted: adm, vouched: map[string]bool{}, refused: map[string]bool{}}, adm
}

// TestSequencerActsOnlyOnAdmittedJobs: a job carrying Harvest's stage meta
// that reached Nomad without the proxy gets no stage job, and a look-alike
// stage of a stopped parent is not stopped; the admitted job's stage is
// started and recorded, and an admitted orphan stage is stopped.
func TestSequencerActsOnlyOnAdmittedJobs(t *testing.T) {
	meta := map[string]string{proxy.JobTypeKey: "medium", proxy.StagesKey: `{"b":1}`, proxy.ClassesKey: "c"}
	nomad := &stageNomad{reads: map[string]int{}, stubs: []*nomadapi.JobListStub{
		dagStub("direct", 7, meta),
		dagStub("proxied", 9, meta),
		dagStub("fake.b", 11, map[string]string{parentKey: "gone", proxy.JobTypeKey: "medium"}),
		dagStub("old.b", 12, map[string]string{parentKey: "old", proxy.JobTypeKey: "medium"}),
	}}
	// direct: an earlier run was admitted, not this one
	s, adm := admittedSequencer(t, nomad, map[string]uint64{"proxied": 9, "old.b": 12, "direct": 6})
	ctx := context.Background()
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	nomad.mu.Lock()
	writes, reads := strings.Join(nomad.writes, ","), nomad.reads
	nomad.mu.Unlock()
	if writes != "DELETE old.b,PUT proxied.b" {
		t.Fatalf("writes %q, want the admitted orphan stopped and only the admitted job's stage started", writes)
	}
	if reads["direct"] != 0 {
		t.Fatalf("the sequencer read a job it did not admit (%d reads)", reads["direct"])
	}
	if ok, err := adm.Admitted(ctx, "default", "proxied.b", 100); !ok || err != nil {
		t.Fatalf("the stage job's registration was not recorded: %v %v", ok, err)
	}
}

// TestSequencerForgetsRunsNomadNoLongerLists: 10,000 finished runs of jobs
// since purged or re-run leave nothing behind; the current runs stay known.
func TestSequencerForgetsRunsNomadNoLongerLists(t *testing.T) {
	s := &Sequencer{done: map[string]bool{}, vouched: map[string]bool{}, refused: map[string]bool{}, specs: map[string]*nomadapi.Job{}}
	for i := 0; i < 10000; i++ {
		run := fmt.Sprintf("default/etl-%d@%d", i, i+1)
		s.done[run], s.vouched[run] = true, true
		id, index := fmt.Sprintf("etl-%d", i), uint64(i+1)
		s.specs["default/"+id] = &nomadapi.Job{ID: &id, JobModifyIndex: &index}
	}
	s.refused["default/direct@4"] = true
	s.done["default/etl-7@8"] = true // still Nomad's current run of etl-7
	s.forget([]*nomadapi.JobListStub{{Namespace: "default", ID: "etl-7", JobModifyIndex: 8}, {Namespace: "default", ID: "new", JobModifyIndex: 3}})
	if len(s.done) != 1 || !s.done["default/etl-7@8"] || len(s.vouched) != 1 || len(s.refused) != 0 ||
		len(s.specs) != 1 || s.specs["default/etl-7"] == nil {
		t.Fatalf("after forget: done %d, vouched %d, refused %d, specs %d; want only etl-7's current run",
			len(s.done), len(s.vouched), len(s.refused), len(s.specs))
	}
}

// A group that reschedules without limit (the proxy's default) is retried
// through evictions and refused starts for as long as they happen, but a
// task failing by itself three times stops the job, recorded as failed.
func TestSequencerStopsAJobWhoseTasksKeepFailingByThemselves(t *testing.T) {
	meta := map[string]string{proxy.JobTypeKey: "medium", proxy.StagesKey: `{"b":1}`, proxy.ClassesKey: "c"}
	failed := func(job, msg string) *nomadapi.AllocationListStub {
		return &nomadapi.AllocationListStub{JobID: job, Namespace: "default", TaskGroup: "a", ClientStatus: "failed", CreateIndex: 1000,
			NextAllocation: "next", ModifyTime: time.Now().UnixNano(),
			TaskStates: map[string]*nomadapi.TaskState{"t": {Events: []*nomadapi.TaskEvent{{DisplayMessage: msg}}}}}
	}
	nomad := &stageNomad{reads: map[string]int{}, unlimited: true, stubs: []*nomadapi.JobListStub{
		dagStub("evicted", 9, meta), dagStub("broken", 10, meta)}}
	nomad.allocsOfA = func(job string) []*nomadapi.AllocationListStub {
		var out []*nomadapi.AllocationListStub
		for range 5 {
			msg := contract.EvictionPrefix + "primary tenant needs 9 cores"
			if job == "broken" {
				msg = "Exit Code: 1"
			}
			out = append(out, failed(job, msg), failed(job, "Driver Failure: "+contract.RefusalPrefix+"(1.00 cores, 32 MiB) would leave"))
		}
		return append(out, &nomadapi.AllocationListStub{JobID: job, Namespace: "default", TaskGroup: "a", ClientStatus: "pending", CreateIndex: 1000})
	}
	s, _ := admittedSequencer(t, nomad, map[string]uint64{"evicted": 9, "broken": 10})
	store, ctx := s.store, context.Background()
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	nomad.mu.Lock()
	writes := strings.Join(nomad.writes, ",")
	nomad.mu.Unlock()
	if writes != "DELETE broken" {
		t.Fatalf("writes %q, want only the broken job stopped", writes)
	}
	run, ok, err := store.LastJobRun(ctx, "default", "broken")
	if err != nil || !ok || !strings.Contains(run.Status, "failed by themselves 5 times") {
		t.Fatalf("broken's run: %+v %v %v", run, ok, err)
	}
	if _, ok, _ := store.LastJobRun(ctx, "default", "evicted"); ok {
		t.Fatal("the evicted job was recorded as finished while its work is still rescheduled")
	}
}

// A refused start whose replacement waits in a blocked evaluation (no
// next allocation, no follow-up evaluation, the group queued in the job's
// summary) keeps its stage running; with nothing queued it has failed.
func TestARefusedStartWaitingForRoomIsNotAFailedStage(t *testing.T) {
	meta := map[string]string{proxy.JobTypeKey: "medium", proxy.StagesKey: `{"b":1}`, proxy.ClassesKey: "c"}
	refused := func(job string) []*nomadapi.AllocationListStub {
		return []*nomadapi.AllocationListStub{{JobID: job, Namespace: "default", TaskGroup: "a", ClientStatus: "failed", CreateIndex: 1000,
			ModifyTime: time.Now().Add(-time.Minute).UnixNano(),
			TaskStates: map[string]*nomadapi.TaskState{"t": {Events: []*nomadapi.TaskEvent{{DisplayMessage: "Driver Failure: " +
				contract.RefusalPrefix + "(1.00 cores, 32 MiB) would leave"}}}}}}
	}
	for _, unlimited := range []bool{false, true} {
		waiting := dagStub("waiting", 9, meta)
		waiting.JobSummary = &nomadapi.JobSummary{Summary: map[string]nomadapi.TaskGroupSummary{"a": {Queued: 1, Failed: 1}}}
		nomad := &stageNomad{reads: map[string]int{}, unlimited: unlimited, allocsOfA: refused,
			stubs: []*nomadapi.JobListStub{waiting, dagStub("unseen", 10, meta)}}
		s, _ := admittedSequencer(t, nomad, map[string]uint64{"waiting": 9, "unseen": 10})
		store, ctx := s.store, context.Background()
		if err := s.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if run, ok, _ := store.LastJobRun(ctx, "default", "waiting"); ok {
			t.Fatalf("unlimited %v: the job whose replacement waits for room was recorded as %q", unlimited, run.Status)
		}
		// nothing queued, no next allocation, no follow-up evaluation: under
		// a bounded policy Nomad gave up; without limit it replaces it later
		run, ok, err := store.LastJobRun(ctx, "default", "unseen")
		switch {
		case err != nil:
			t.Fatal(err)
		case !unlimited && (!ok || !strings.Contains(run.Status, "failed")):
			t.Fatalf("bounded policy, nothing queued: %+v %v, want a failed run", run, ok)
		case unlimited && ok:
			t.Fatalf("reschedule without limit, nothing queued yet: recorded as %q, want the job left to Nomad", run.Status)
		}
	}
}
