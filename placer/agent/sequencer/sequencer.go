// Package sequencer owns the stage sequencer behind the placer's admission
// proxy: it runs the deferred stages of the harvested DAG jobs the placer
// admitted (placer/agent/admissions) as stage jobs of their own, stops the
// stages of a stopped parent, stops a job whose tasks keep failing by
// themselves, and records each harvested job run's duration in the
// history (the next run's job type; the short-job partition's cutoff
// hears of it through Finished).
package sequencer

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/dag"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/stages"
)

// settle is how long a failed allocation may wait for the scheduler to
// plan its replacement before it counts as failed for good.
const settle = 10 * time.Second

// maxSelfFailures is how many times a group's tasks may fail by themselves
// (not evicted, not refused by the harvest driver) before the sequencer
// stops a job whose group reschedules without limit (the proxy's default):
// evictions and refusals are retried for as long as they happen, a broken
// task three times.
const maxSelfFailures = 3

// Stage jobs carry these meta keys.
const (
	parentKey      = "harvest_parent"       // the DAG job a stage job belongs to
	parentIndexKey = "harvest_parent_index" // the parent's JobModifyIndex (one run of it)
)

// Interval is how often the sequencer passes (the placer's "stages" loop)
// when no allocation changes.
const Interval = 2 * time.Second

// Gap is the least time between two passes: the loop also passes when
// Nomad's allocation list changes (a stage's last task ended), and a burst
// of changes costs one pass per Gap. With the 2-second pass alone a stage
// waited 1 s on average for its release, of the 1.8 s (17.8 trace seconds
// at x10) the testbed measured from a stage's end to the next's first
// allocation (docs/testbed.md).
const Gap = 250 * time.Millisecond

// Sequencer runs the deferred stages of harvested DAG jobs and records each
// harvested job's duration when it finishes (for the next run's job type).
//
// A deferred stage runs as a job of its own, "<job>.<group>", registered
// when its upstream stages complete. It cannot be the parent job's group
// scaled up: every new version of a batch job makes Nomad run its completed
// groups again (seen here: scaling stage 2 re-ran stage 1).
//
// It reads Nomad's job and allocation lists through the shared view's
// watch and each job's spec once per version, so a pass over jobs whose
// allocations did not change costs no request.
type Sequencer struct {
	nomad *nomadapi.Client
	view  cluster.View
	specs map[string]*nomadapi.Job // namespace/job -> its spec, as of the run it was read for
	wrote uint64                   // the index of the last job this placer registered or stopped
	store *history.Store
	log   hclog.Logger
	done  map[string]bool // runs (namespace/job@index) already recorded or stopped
	// admitted are the runs the placer vouches for (placer/agent/admissions):
	// only those are sequenced, and only stage jobs it registered are stopped.
	admitted admissions.Store
	vouched  map[string]bool // runs found admitted (they stay so)
	refused  map[string]bool // runs found not admitted, logged once
	// Finished, when set, hears of every recorded run (the short-job
	// partition's cutoff follows them).
	Finished func(ctx context.Context, run string, d time.Duration) error
}

// New is a sequencer acting on Nomad through nomad, reading its lists
// through view, recording runs in store; it acts only on the runs admitted
// records.
func New(nomad *nomadapi.Client, view cluster.View, store *history.Store, admitted admissions.Store, log hclog.Logger) *Sequencer {
	return &Sequencer{nomad: nomad, view: view, store: store, log: log, done: map[string]bool{},
		admitted: admitted, vouched: map[string]bool{}, refused: map[string]bool{}}
}

// Tick is one pass over Nomad's jobs.
func (s *Sequencer) Tick(ctx context.Context) error {
	// a list that shows this placer's own last write (or a stage would
	// be registered twice)
	jobs, err := s.view.Jobs(ctx, s.wrote)
	if err != nil {
		return err
	}
	allocs, err := s.view.Allocations(ctx)
	if err != nil {
		return err
	}
	byJob := map[string][]*nomadapi.AllocationListStub{}
	for _, a := range allocs {
		byJob[a.Namespace+"/"+a.JobID] = append(byJob[a.Namespace+"/"+a.JobID], a)
	}
	live, listed := map[string]bool{}, map[string]*nomadapi.JobListStub{}
	for _, j := range jobs {
		listed[j.Namespace+"/"+j.ID] = j
		if !j.Stop {
			live[j.Namespace+"/"+j.ID] = true
		}
	}
	for _, j := range jobs {
		if parent := j.Meta[parentKey]; parent != "" && !j.Stop && !live[j.Namespace+"/"+parent] {
			// the DAG job was stopped or purged: its stages go with it (only
			// stage jobs the sequencer registered)
			if ok, err := s.isAdmitted(ctx, j); err != nil || !ok {
				continue
			}
			if _, wm, err := s.nomad.Jobs().Deregister(j.ID, true, (&nomadapi.WriteOptions{Namespace: j.Namespace}).WithContext(ctx)); err != nil {
				s.log.Warn("stopping orphaned stage failed", "job", j.ID, "error", err)
			} else {
				s.wrote = max(s.wrote, wm.LastIndex)
				s.log.Info("stopped stage of a stopped job", "job", j.ID, "parent", parent)
			}
		}
	}
	for _, j := range jobs {
		if j.Meta[proxy.JobTypeKey] == "" || j.Meta[parentKey] != "" || j.Stop {
			continue // not rewritten by the proxy, a stage job, or stopped
		}
		if ok, err := s.isAdmitted(ctx, j); err != nil || !ok {
			if err != nil {
				s.log.Warn("cannot read whether the proxy admitted a job", "job", j.ID, "namespace", j.Namespace, "error", err)
			}
			continue
		}
		if err := s.job(ctx, j, listed, byJob); err != nil {
			s.log.Warn("sequencing job failed", "job", j.ID, "namespace", j.Namespace, "error", err)
		}
	}
	s.forget(jobs)
	return nil
}

// forget drops what the sequencer remembers of runs Nomad no longer lists
// as any job's current run (purged jobs, and runs a new version replaced):
// they are never looked up again, and the maps stay as large as the
// cluster's jobs instead of growing with every run ever finished.
func (s *Sequencer) forget(jobs []*nomadapi.JobListStub) {
	current := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		current[fmt.Sprintf("%s/%s@%d", j.Namespace, j.ID, j.JobModifyIndex)] = true
	}
	for _, m := range []map[string]bool{s.done, s.vouched, s.refused} {
		for run := range m {
			if !current[run] {
				delete(m, run)
			}
		}
	}
	for key, spec := range s.specs {
		if !current[fmt.Sprintf("%s@%d", key, *spec.JobModifyIndex)] {
			delete(s.specs, key)
		}
	}
}

// isAdmitted reports whether the job's current run is one the placer
// admitted (through the proxy, or by registering it itself); a job carrying
// Harvest's meta that was sent to Nomad some other way is left alone,
// logged once per run.
func (s *Sequencer) isAdmitted(ctx context.Context, j *nomadapi.JobListStub) (bool, error) {
	run := fmt.Sprintf("%s/%s@%d", j.Namespace, j.ID, j.JobModifyIndex)
	if s.vouched[run] {
		return true, nil
	}
	ok, err := s.admitted.Admitted(ctx, j.Namespace, j.ID, j.JobModifyIndex)
	switch {
	case err != nil:
		return false, err
	case ok:
		s.vouched[run] = true
	case !s.refused[run] && time.Since(time.Unix(0, j.SubmitTime)) > settle:
		// (a run the proxy just registered is recorded right after Nomad's
		// answer: not worth a warning yet)
		s.refused[run] = true
		s.log.Warn("job carries Harvest's meta but was not admitted through the placer's proxy: no stages, no history",
			"job", j.ID, "namespace", j.Namespace, "job_modify_index", j.JobModifyIndex)
	}
	return ok, nil
}

// queued is how many of group's allocations the scheduler has yet to place
// for the listed job (its summary's Queued: a blocked evaluation's).
func queued(stub *nomadapi.JobListStub, group string) int {
	if stub == nil || stub.JobSummary == nil {
		return 0
	}
	return stub.JobSummary.Summary[group].Queued
}

// jobVersion is a job's version and its creation's index: which of its
// allocations are of that version or later. The zero value counts all.
type jobVersion struct{ createIndex, version uint64 }

func versionOf(j *nomadapi.Job) jobVersion {
	var v jobVersion
	if j.CreateIndex != nil {
		v.createIndex = *j.CreateIndex
	}
	if j.Version != nil {
		v.version = *j.Version
	}
	return v
}

// groupState counts a group's allocations: of the given job, those created
// since the job was and of its version or later (the test Nomad's
// filterOldTerminalAllocs puts a terminal allocation to; a live one of an
// older version Nomad either updates in place, making it of the new
// version, or replaces). An allocation updated in place by a new version
// (the escalator's constraint change) is of that version; one complete
// under an older version is not, and Nomad runs it again. A stage job is
// counted from its own version, so the stage of a parent's earlier run
// (re-registered for the new one) does not count as done.
// queued is the group's allocations waiting for a placement: a failed
// allocation whose replacement waits in a blocked evaluation (the room
// device full, say) has neither a next allocation nor a follow-up
// evaluation, and counts as active while any is queued, not as failed.
// Under a reschedule policy without limit (retriesForever) no allocation
// is failed for good: Nomad replaces it, now, after its delay, or once
// room frees, and the moments in between need not show it (a job stopped
// with "upstream stage failed" 13 s after an evicted task's replacement
// was refused, in the testbed); a group failing by itself is stopped by
// maxSelfFailures instead.
//
// A failed allocation whose name (job.group[index]) has a complete or live
// allocation is superseded whatever its NextAllocation says: a replacement
// can carry the name without being linked to the allocation it replaces
// (seen in the testbed: a first stage of two failed allocations with no
// next allocation and two complete ones, its next stage never released;
// likely replacements placed from a blocked evaluation).
func groupState(g *stages.Group, allocs []*nomadapi.AllocationListStub, from jobVersion, queued int, retriesForever bool) {
	mine := func(a *nomadapi.AllocationListStub) bool {
		return a.TaskGroup == g.Name && a.CreateIndex >= from.createIndex && a.JobVersion >= from.version
	}
	covered := map[string]bool{} // names with a complete or live allocation
	for _, a := range allocs {
		if mine(a) && a.ClientStatus != nomadapi.AllocClientStatusFailed && a.ClientStatus != nomadapi.AllocClientStatusLost {
			covered[a.Name] = true
		}
	}
	for _, a := range allocs {
		if !mine(a) {
			continue
		}
		switch a.ClientStatus {
		case nomadapi.AllocClientStatusComplete:
			g.Complete++
		case nomadapi.AllocClientStatusFailed, nomadapi.AllocClientStatusLost:
			if a.ClientStatus == nomadapi.AllocClientStatusFailed && !endedByHarvest(a) {
				g.SelfFailed++
			}
			switch {
			case a.Name != "" && covered[a.Name]:
				// superseded: its name's replacement counts
			case a.NextAllocation != "":
				// replaced (an eviction rescheduled): the replacement counts
			case retriesForever:
				g.Active++ // Nomad replaces it: only the moment is unknown
			case a.FollowupEvalID != "" || time.Since(time.Unix(0, a.ModifyTime)) < settle:
				g.Active++ // a replacement is coming, or the scheduler has not decided yet
			case queued > 0:
				queued--
				g.Active++ // its replacement waits for room in a blocked evaluation
			default:
				g.Failed++
			}
		default:
			g.Active++
		}
	}
}

// endedByHarvest says whether the harvest driver ended the allocation: an
// eviction or a refused start, told by their messages' prefixes.
func endedByHarvest(a *nomadapi.AllocationListStub) bool {
	for _, ts := range a.TaskStates {
		for _, e := range ts.Events {
			for _, m := range []string{e.DisplayMessage, e.Message, e.DriverError, e.DriverMessage} {
				if strings.Contains(m, contract.EvictionPrefix) || strings.Contains(m, contract.RefusalPrefix) {
					return true
				}
			}
		}
	}
	return false
}

// unlimited says whether a group reschedules without limit.
func unlimited(tg *nomadapi.TaskGroup) bool {
	return tg.ReschedulePolicy != nil && tg.ReschedulePolicy.Unlimited != nil && *tg.ReschedulePolicy.Unlimited
}

// stopBroken stops a job one of whose unlimited groups failed by itself
// maxSelfFailures times, and records the run as failed; its stage jobs
// follow it on the next pass.
func (s *Sequencer) stopBroken(ctx context.Context, job *nomadapi.Job, g stages.Group, all []*nomadapi.AllocationListStub, run string) error {
	_, wm, err := s.nomad.Jobs().Deregister(*job.ID, false, (&nomadapi.WriteOptions{Namespace: *job.Namespace}).WithContext(ctx))
	if err != nil {
		return fmt.Errorf("stopping %s: %w", *job.ID, err)
	}
	s.wrote = max(s.wrote, wm.LastIndex)
	msg := fmt.Sprintf("failed: stage %s: its tasks failed by themselves %d times (not evicted or refused); job stopped", g.Name, g.SelfFailed)
	s.log.Warn("stopped a job whose tasks keep failing", "job", *job.ID, "group", g.Name, "self_failures", g.SelfFailed)
	return s.finish(ctx, job, all, msg, run)
}

// job sequences one DAG job's run: listed are the jobs and byJob their
// allocations (namespace/job), as this pass read them.
func (s *Sequencer) job(ctx context.Context, stub *nomadapi.JobListStub, listed map[string]*nomadapi.JobListStub,
	byJob map[string][]*nomadapi.AllocationListStub) error {
	// a run already recorded (or stopped) needs no more reads of Nomad
	run := fmt.Sprintf("%s/%s@%d", stub.Namespace, stub.ID, stub.JobModifyIndex)
	if s.done[run] {
		return nil
	}
	job, err := s.spec(ctx, stub)
	if err != nil {
		return err
	}
	run = fmt.Sprintf("%s/%s@%d", stub.Namespace, stub.ID, *job.JobModifyIndex) // as of the spec read
	allocs := byJob[stub.Namespace+"/"+stub.ID]
	declared := map[string]int{}
	if v := job.Meta[proxy.StagesKey]; v != "" {
		if err := json.Unmarshal([]byte(v), &declared); err != nil {
			return fmt.Errorf("meta %s: %w", proxy.StagesKey, err)
		}
	}
	var groups []stages.Group
	all := append([]*nomadapi.AllocationListStub(nil), allocs...)
	retriesForever := map[string]bool{}
	for _, tg := range job.TaskGroups {
		retriesForever[*tg.Name] = unlimited(tg)
		g := stages.Group{Name: *tg.Name, Count: *tg.Count, Declared: *tg.Count, After: dag.ParseAfter(tg.Meta[dag.AfterKey])}
		d, deferred := declared[g.Name]
		if !deferred {
			groupState(&g, allocs, versionOf(job), queued(stub, g.Name), retriesForever[g.Name])
			groups = append(groups, g)
			continue
		}
		g.Declared = d
		stage := listed[*job.Namespace+"/"+stageID(*job.ID, g.Name)]
		stageAllocs := byJob[*job.Namespace+"/"+stageID(*job.ID, g.Name)]
		if stage != nil && stage.Meta[parentIndexKey] == strconv.FormatUint(*job.JobModifyIndex, 10) {
			g.Count = d                     // this run's stage job exists
			spec, err := s.spec(ctx, stage) // its version: the list does not say
			if err != nil {
				return err
			}
			groupState(&g, stageAllocs, versionOf(spec), queued(stage, g.Name), retriesForever[g.Name])
			all = append(all, stageAllocs...)
		}
		groups = append(groups, g)
	}
	for _, g := range groups {
		if retriesForever[g.Name] && g.SelfFailed >= maxSelfFailures {
			return s.stopBroken(ctx, job, g, all, run)
		}
	}
	for _, act := range stages.Next(groups) {
		if act.Error {
			s.log.Warn("stage stopped", "job", stub.ID, "group", act.Group, "reason", act.Message)
			return s.finish(ctx, job, all, "failed: "+act.Message, run)
		}
		if err := s.startStage(ctx, job, act.Group, act.Count); err != nil {
			return fmt.Errorf("start stage %s: %w", act.Group, err)
		}
		s.log.Info("started stage", "job", stub.ID, "group", act.Group, "count", act.Count, "why", act.Message)
	}
	for _, g := range groups {
		if !g.Done() {
			if g.Failed > 0 && g.Active == 0 {
				return s.finish(ctx, job, all, "failed: stage "+g.Name+" failed", run)
			}
			return nil // still running
		}
	}
	return s.finish(ctx, job, all, "complete", run)
}

func stageID(parent, group string) string { return parent + "." + group }

// spec returns the job's spec for the listed run, read from Nomad once
// per run (a spec changes only with its JobModifyIndex).
func (s *Sequencer) spec(ctx context.Context, stub *nomadapi.JobListStub) (*nomadapi.Job, error) {
	key := stub.Namespace + "/" + stub.ID
	if j := s.specs[key]; j != nil && *j.JobModifyIndex == stub.JobModifyIndex {
		return j, nil
	}
	j, _, err := s.nomad.Jobs().Info(stub.ID, (&nomadapi.QueryOptions{Namespace: stub.Namespace}).WithContext(ctx))
	if err != nil {
		return nil, err
	}
	if s.specs == nil {
		s.specs = map[string]*nomadapi.Job{}
	}
	s.specs[key] = j
	return j, nil
}

// startStage registers "<parent>.<group>": the parent job (its constraints,
// meta and the class choice included) with that one group at its count.
func (s *Sequencer) startStage(ctx context.Context, parent *nomadapi.Job, group string, count int) error {
	var tg *nomadapi.TaskGroup
	for _, g := range parent.TaskGroups {
		if *g.Name == group {
			tg = g
		}
	}
	if tg == nil {
		return fmt.Errorf("no group %s", group)
	}
	stage, one := *parent, *tg // copies: the parent's spec is kept for the next pass
	id := stageID(*parent.ID, group)
	stage.ID, stage.Name = &id, &id
	stage.TaskGroups = []*nomadapi.TaskGroup{&one}
	one.Count = &count
	stage.Meta = map[string]string{}
	for k, v := range parent.Meta {
		stage.Meta[k] = v
	}
	stage.Meta[parentKey] = *parent.ID
	stage.Meta[parentIndexKey] = strconv.FormatUint(*parent.JobModifyIndex, 10)
	delete(stage.Meta, proxy.StagesKey)
	stage.Version, stage.JobModifyIndex, stage.ModifyIndex, stage.CreateIndex, stage.SubmitTime = nil, nil, nil, nil, nil
	stage.Status, stage.StatusDescription, stage.Stable = nil, nil, nil
	resp, _, err := s.nomad.Jobs().Register(&stage, (&nomadapi.WriteOptions{Namespace: *parent.Namespace}).WithContext(ctx))
	if err != nil {
		return err
	}
	s.wrote = max(s.wrote, resp.JobModifyIndex)
	// a stage job is the placer's own: recorded, so that it is stopped with
	// its parent (and a look-alike sent by someone else is not)
	return s.admitted.As("sequencer").Admit(ctx, *parent.Namespace, id, resp.JobModifyIndex)
}

// finish records a job run: from submission to the last allocation's end,
// over the parent and its stage jobs.
func (s *Sequencer) finish(ctx context.Context, job *nomadapi.Job, allocs []*nomadapi.AllocationListStub, status, run string) error {
	end := int64(0)
	for _, a := range allocs {
		end = max(end, a.ModifyTime)
	}
	// from the run's first version: an escalation's version moves Nomad's
	// SubmitTime, and the placer recorded when the run it continues began
	began := *job.SubmitTime
	if b, ok, err := s.admitted.Began(ctx, *job.Namespace, *job.ID, *job.JobModifyIndex); err == nil && ok && b.UnixNano() < began {
		began = b.UnixNano()
	}
	r := history.JobRun{Namespace: *job.Namespace, Job: *job.ID, Duration: time.Duration(end - began),
		Finished: time.Unix(0, end).UTC(), Status: status}
	if r.Duration <= 0 {
		return nil
	}
	if err := s.store.RecordJobRun(ctx, r); err != nil {
		return err
	}
	s.done[run] = true
	if s.Finished != nil {
		if err := s.Finished(ctx, run, r.Duration); err != nil {
			s.log.Warn("partition did not hear of a finished run", "job", r.Job, "error", err)
		}
	}
	s.log.Info("recorded job run", "job", r.Job, "namespace", r.Namespace, "duration", r.Duration.Round(time.Second), "status", status)
	return nil
}
