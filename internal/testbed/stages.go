package testbed

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// StageTimes is where a finished job's time goes on the testbed, in trace
// seconds (the simulator's job time is its tasks' lengths along the stages
// plus the wait for a core): every figure the mean over the run's finished
// jobs, stages or tasks. A job's time is exactly FirstStage + Stages x
// Span + (Stages - 1) x Release, job by job; a stage's span is its
// slowest task's Queue + Retry + Start + length + Overrun.
type StageTimes struct {
	Jobs int `json:"jobs"`
	// Stages per job, and CriticalPath: the sum of each stage's longest
	// task, what a job takes with no wait at all.
	Stages       float64 `json:"stages"`
	CriticalPath float64 `json:"critical_path_seconds"`
	// FirstStage: the job's arrival to its first allocation's creation
	// (submission through the proxy, Nomad's evaluation and placement).
	FirstStage Summary `json:"to_first_allocation_seconds"`
	// Release: a stage's last task's end to the next stage's first
	// allocation (the stage sequencer seeing the end, the next stage job's
	// registration, evaluation and placement), per stage boundary.
	Release Summary `json:"release_seconds"`
	// Span: a stage's first allocation's creation to its last task's end,
	// per stage.
	Span Summary `json:"stage_span_seconds"`
	// Queue: a task's stage's first allocation's creation to the creation
	// of the task's own first allocation (the wait for room: Nomad placed
	// the stage's other tasks first), per task.
	Queue Summary `json:"queue_seconds"`
	// Retry: a task's first allocation's creation to the creation of the
	// allocation that ran it to the end (refused or evicted attempts and
	// the reschedule waits between them), per task.
	Retry Summary `json:"retry_seconds"`
	// Start: that allocation's creation to its task's start, per task.
	Start Summary `json:"start_seconds"`
	// Overrun: the task's run time beyond its length (the process, its
	// input read, the client reporting its end), per task.
	Overrun Summary `json:"overrun_seconds"`
	// Retried and Clean split the finished jobs' times by whether any of
	// their tasks took more than one allocation (a refused start, an
	// eviction or a failure, and Nomad's reschedule delay of at least 5 s
	// wall before the next, which the speed-up multiplies): what the
	// retries cost a job, beside the simulator, which has no refusal.
	Retried Summary `json:"retried_job_seconds"`
	Clean   Summary `json:"clean_job_seconds"`
}

// stageTally gathers StageTimes over the finished jobs, as report counts
// them.
type stageTally struct {
	speedup                      float64
	jobs                         int
	stages, critical             float64
	first, release, span         []float64
	queue, retry, start, overrun []float64
	retried, clean               []float64
}

// add counts one finished job that arrived at arrival (wall) and took
// took trace seconds.
func (t *stageTally) add(j *job, allocs []alloc, arrival time.Time, took float64) {
	trace := func(d time.Duration) float64 { return d.Seconds() * t.speedup }
	// per stage: its first allocation's creation and its last task's end
	created := map[string]time.Time{}
	ended := map[string]time.Time{}
	// per task (group and index): its first attempt, and the allocation that completed it
	attempt := map[string]time.Time{}
	done := map[string]alloc{}
	for _, a := range allocs {
		if c, seen := created[a.Group]; !seen || a.Created.Before(c) {
			created[a.Group] = a.Created
		}
		task := a.Group + "/" + allocIndex(a.Name)
		if c, seen := attempt[task]; !seen || a.Created.Before(c) {
			attempt[task] = a.Created
		}
		if a.Status == "complete" {
			done[task] = a
			if a.Finished.After(ended[a.Group]) {
				ended[a.Group] = a.Finished
			}
		}
	}
	t.jobs++
	if len(attempt) < len(allocs) {
		t.retried = append(t.retried, took)
	} else {
		t.clean = append(t.clean, took)
	}
	t.stages += float64(len(j.Stages))
	t.first = append(t.first, trace(created["s1"].Sub(arrival)))
	for s, lengths := range j.Stages {
		group := "s" + strconv.Itoa(s+1)
		if len(lengths) > 0 {
			t.critical += slices.Max(lengths)
		}
		if s > 0 {
			t.release = append(t.release, trace(created[group].Sub(ended["s"+strconv.Itoa(s)])))
		}
		t.span = append(t.span, trace(ended[group].Sub(created[group])))
		for i, length := range lengths {
			task := group + "/" + strconv.Itoa(i)
			a, ok := done[task]
			if !ok || a.Started.IsZero() {
				continue
			}
			t.queue = append(t.queue, trace(attempt[task].Sub(created[group])))
			t.retry = append(t.retry, trace(a.Created.Sub(attempt[task])))
			t.start = append(t.start, trace(a.Started.Sub(a.Created)))
			t.overrun = append(t.overrun, trace(a.Finished.Sub(a.Started))-length)
		}
	}
}

// times is the jobs' StageTimes; nil when none finished.
func (t *stageTally) times() *StageTimes {
	if t.jobs == 0 {
		return nil
	}
	n := float64(t.jobs)
	return &StageTimes{Jobs: t.jobs, Stages: t.stages / n, CriticalPath: t.critical / n,
		FirstStage: summarize(t.first), Release: summarize(t.release), Span: summarize(t.span),
		Queue: summarize(t.queue), Retry: summarize(t.retry),
		Start: summarize(t.start), Overrun: summarize(t.overrun), Retried: summarize(t.retried), Clean: summarize(t.clean)}
}

// allocIndex is the index in an allocation's name (job.group[index]).
func allocIndex(name string) string {
	i := strings.LastIndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return name
	}
	return name[i+1 : len(name)-1]
}
