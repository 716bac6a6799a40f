package sequencer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/stages"
)

// stageNomad is the fake Nomad holding DAG jobs (group a, then b), each
// given as id -> JobModifyIndex and meta; allocsOfA, when set, are group
// a's allocations of each job instead of one that completed; unlimited
// makes group a reschedule forever.
func stageNomad(jobs []dagJob, unlimited bool, allocsOfA func(job string) []*nomadapi.AllocationListStub) *nomadtest.ScaleNomad {
	f := nomadtest.NewScaleNomad(0, 0)
	for _, d := range jobs {
		id, ns, a, b, one, zero := d.id, "default", "a", "b", 1, 0
		index, submit := d.index, time.Now().Add(-time.Hour).UnixNano()
		groupA := &nomadapi.TaskGroup{Name: &a, Count: &one}
		if unlimited {
			groupA.ReschedulePolicy = &nomadapi.ReschedulePolicy{Unlimited: &unlimited}
		}
		f.Jobs = append(f.Jobs, &nomadapi.Job{ID: &id, Name: &id, Namespace: &ns, Meta: d.meta, JobModifyIndex: &index, ModifyIndex: &index,
			SubmitTime: &submit, TaskGroups: []*nomadapi.TaskGroup{groupA, {Name: &b, Count: &zero, Meta: map[string]string{"harvest_after": "a"}}}})
		if d.summary != nil {
			f.Summaries[id] = d.summary
		}
		if allocsOfA != nil {
			f.Allocs = append(f.Allocs, allocsOfA(id)...)
			continue
		}
		f.Allocs = append(f.Allocs, &nomadapi.AllocationListStub{JobID: id, Namespace: ns, TaskGroup: "a",
			ClientStatus: "complete", CreateIndex: 1000, ModifyTime: time.Now().UnixNano()})
	}
	return f
}

// dagJob is one of stageNomad's jobs.
type dagJob struct {
	id      string
	index   uint64
	meta    map[string]string
	summary *nomadapi.JobSummary // nil: the fake's default
}

// jobWrites are the fake's job writes so far, comma-separated.
func jobWrites(f *nomadtest.ScaleNomad) string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return strings.Join(f.JobWrites, ",")
}

// admittedSequencer is a sequencer over the fake Nomad with the given runs
// (job -> JobModifyIndex) admitted.
func admittedSequencer(t *testing.T, nomad *nomadtest.ScaleNomad, runs map[string]uint64) (*Sequencer, admissions.Store) {
	t.Helper()
	client := nomad.Serve(t)
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
	nomad := stageNomad([]dagJob{
		{id: "direct", index: 7, meta: meta},
		{id: "proxied", index: 9, meta: meta},
		{id: "fake.b", index: 11, meta: map[string]string{parentKey: "gone", proxy.JobTypeKey: "medium"}},
		{id: "old.b", index: 12, meta: map[string]string{parentKey: "old", proxy.JobTypeKey: "medium"}},
	}, false, nil)
	// direct: an earlier run was admitted, not this one
	s, adm := admittedSequencer(t, nomad, map[string]uint64{"proxied": 9, "old.b": 12, "direct": 6})
	ctx := context.Background()
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if writes := jobWrites(nomad); writes != "deregister old.b,register proxied.b" {
		t.Fatalf("writes %q, want the admitted orphan stopped and only the admitted job's stage started", writes)
	}
	if reads := nomad.Requests("GET /v1/job/direct"); reads != 0 {
		t.Fatalf("the sequencer read a job it did not admit (%d reads)", reads)
	}
	nomad.Mu.Lock()
	registered := *nomad.Registered[0].JobModifyIndex
	nomad.Mu.Unlock()
	if ok, err := adm.Admitted(ctx, "default", "proxied.b", registered); !ok || err != nil {
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
	allocsOfA := func(job string) []*nomadapi.AllocationListStub {
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
	nomad := stageNomad([]dagJob{{id: "evicted", index: 9, meta: meta}, {id: "broken", index: 10, meta: meta}}, true, allocsOfA)
	s, _ := admittedSequencer(t, nomad, map[string]uint64{"evicted": 9, "broken": 10})
	store, ctx := s.store, context.Background()
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if writes := jobWrites(nomad); writes != "deregister broken" {
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
		queued := &nomadapi.JobSummary{JobID: "waiting", Summary: map[string]nomadapi.TaskGroupSummary{"a": {Queued: 1, Failed: 1}}}
		nothing := &nomadapi.JobSummary{JobID: "unseen", Summary: map[string]nomadapi.TaskGroupSummary{"a": {Failed: 1}}}
		nomad := stageNomad([]dagJob{{id: "waiting", index: 9, meta: meta, summary: queued}, {id: "unseen", index: 10, meta: meta, summary: nothing}},
			unlimited, refused)
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

// A failed allocation whose name has a complete replacement does not hold
// its stage, linked to it or not (a replacement placed from a blocked
// evaluation is not): the next stage starts, under either policy.
func TestAFailedAllocationWhoseNameCompletedIsSuperseded(t *testing.T) {
	meta := map[string]string{proxy.JobTypeKey: "medium", proxy.StagesKey: `{"b":1}`, proxy.ClassesKey: "c"}
	allocsOfA := func(job string) []*nomadapi.AllocationListStub {
		name := job + ".a[0]"
		refused := func() *nomadapi.AllocationListStub {
			return &nomadapi.AllocationListStub{JobID: job, Namespace: "default", Name: name, TaskGroup: "a", ClientStatus: "failed",
				CreateIndex: 1000, ModifyTime: time.Now().Add(-time.Minute).UnixNano(),
				TaskStates: map[string]*nomadapi.TaskState{"t": {Events: []*nomadapi.TaskEvent{{DisplayMessage: "Driver Failure: " +
					contract.RefusalPrefix + "(1.00 cores, 32 MiB) would leave"}}}}}
		}
		return []*nomadapi.AllocationListStub{refused(), refused(), {JobID: job, Namespace: "default", Name: name, TaskGroup: "a",
			ClientStatus: "complete", CreateIndex: 1001, ModifyTime: time.Now().UnixNano()}}
	}
	for _, unlimited := range []bool{false, true} {
		done := &nomadapi.JobSummary{JobID: "etl", Summary: map[string]nomadapi.TaskGroupSummary{"a": {Failed: 2, Complete: 1}}}
		nomad := stageNomad([]dagJob{{id: "etl", index: 9, meta: meta, summary: done}}, unlimited, allocsOfA)
		s, _ := admittedSequencer(t, nomad, map[string]uint64{"etl": 9})
		if err := s.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		if writes := jobWrites(nomad); writes != "register etl.b" {
			t.Fatalf("unlimited %v: writes %q, want the next stage started", unlimited, writes)
		}
	}
}

// A group's allocations are counted as Nomad counts them for the job's
// version: one updated in place by the new version (created before it, an
// escalation's constraint change) is the run's; one complete under an older
// version is not (Nomad runs it again), nor one of a job purged and created
// again.
func TestGroupStateCountsAllocationsOfTheJobsVersion(t *testing.T) {
	job := jobVersion{createIndex: 100, version: 2}
	allocs := []*nomadapi.AllocationListStub{
		{TaskGroup: "a", ClientStatus: "running", CreateIndex: 150, JobVersion: 2},  // updated in place from version 1
		{TaskGroup: "a", ClientStatus: "complete", CreateIndex: 160, JobVersion: 1}, // done under version 1: run again
		{TaskGroup: "a", ClientStatus: "complete", CreateIndex: 210, JobVersion: 2}, // this version's
		{TaskGroup: "a", ClientStatus: "complete", CreateIndex: 50, JobVersion: 3},  // of the job before a purge
		{TaskGroup: "b", ClientStatus: "complete", CreateIndex: 220, JobVersion: 2}, // another group
	}
	g := stages.Group{Name: "a", Count: 2}
	groupState(&g, allocs, job, 0, true)
	if g.Active != 1 || g.Complete != 1 || g.Failed != 0 {
		t.Fatalf("active %d, complete %d, failed %d; want the in-place one active and this version's one complete", g.Active, g.Complete, g.Failed)
	}
	all := stages.Group{Name: "a", Count: 2}
	groupState(&all, allocs, jobVersion{}, 0, true)
	if all.Active != 1 || all.Complete != 3 {
		t.Fatalf("the zero version: active %d, complete %d; want every allocation of the group", all.Active, all.Complete)
	}
}

// A stage job re-registered for a parent's new run counts only its
// allocations of this version: the earlier run's complete one (Nomad runs
// it again) does not make the stage, and so the job, done.
func TestAStageOfAnEarlierRunDoesNotCountAsDone(t *testing.T) {
	meta := map[string]string{proxy.JobTypeKey: "medium", proxy.StagesKey: `{"b":1}`, proxy.ClassesKey: "c"}
	for _, tc := range []struct {
		version uint64 // of the stage's complete allocation
		done    bool
	}{{0, false}, {1, true}} {
		nomad := stageNomad([]dagJob{{id: "etl", index: 20, meta: meta}}, false, nil)
		id, ns, b, one, index, version, created := "etl.b", "default", "b", 1, uint64(21), uint64(1), uint64(5)
		nomad.Jobs = append(nomad.Jobs, &nomadapi.Job{ID: &id, Name: &id, Namespace: &ns, JobModifyIndex: &index, ModifyIndex: &index,
			Version: &version, CreateIndex: &created, Meta: map[string]string{parentKey: "etl", parentIndexKey: "20", proxy.JobTypeKey: "medium"},
			TaskGroups: []*nomadapi.TaskGroup{{Name: &b, Count: &one}}})
		nomad.Allocs = append(nomad.Allocs, &nomadapi.AllocationListStub{JobID: id, Namespace: ns, TaskGroup: "b", ClientStatus: "complete",
			CreateIndex: 10, JobVersion: tc.version, ModifyTime: time.Now().UnixNano()})
		s, _ := admittedSequencer(t, nomad, map[string]uint64{"etl": 20})
		if err := s.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, finished, err := s.store.LastJobRun(context.Background(), "default", "etl")
		if err != nil || finished != tc.done {
			t.Fatalf("the stage's complete allocation of version %d: job finished %v (%v), want %v", tc.version, finished, err, tc.done)
		}
	}
}

// A run's duration counts from when the placer recorded it began, not
// from its current version's SubmitTime, which an escalation moves.
func TestAnEscalatedRunsDurationCountsFromItsBeginning(t *testing.T) {
	meta := map[string]string{proxy.JobTypeKey: "medium", proxy.ClassesKey: "c"}
	nomad := stageNomad([]dagJob{{id: "etl", index: 9, meta: meta}}, false, nil)
	escalated, end := time.Now().Add(time.Minute).UnixNano(), time.Now().Add(2*time.Minute).UnixNano()
	nomad.Jobs[0].SubmitTime = &escalated
	nomad.Allocs[0].ModifyTime = end
	s, _ := admittedSequencer(t, nomad, map[string]uint64{"etl": 9}) // admitted now: the run began
	if err := s.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	run, ok, err := s.store.LastJobRun(context.Background(), "default", "etl")
	if err != nil || !ok || run.Duration < 110*time.Second {
		t.Fatalf("run %+v (%v, %v): want about 2 minutes, from its admission, not 1 from the escalation", run, ok, err)
	}
}
