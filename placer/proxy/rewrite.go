// Package proxy is the placer's admission proxy in front of Nomad's HTTP
// API (Tez-H and RM-H of history-based-harvesting.txt on Nomad): users keep
// `nomad job run` with NOMAD_ADDR pointing here; every request goes to Nomad
// untouched, except the register, plan and validate of harvested jobs,
// which are rewritten first: DAG estimate, job type, Algorithm 1's classes,
// a constraint on ${meta.harvest_class} (none when Algorithm 1 names no
// class), a constraint on the driver's room for each group, restart and
// reschedule for evictions, deferred stages, and an explanation in the
// job's meta.
//
// The job JSON is edited as a generic tree, not decoded into Nomad's API
// structs, so that fields this build does not know pass through intact.
package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/dag"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// Meta keys the proxy reads and writes.
const (
	HarvestKey     = contract.JobHarvest  // job meta: "true" marks a harvested job
	ClassesKey     = contract.JobClasses  // chosen classes, comma-separated
	JobTypeKey     = contract.JobType     // short, medium, long
	EstimateKey    = contract.JobEstimate // JSON of the DAG's peak
	ReasonKey      = contract.JobReason   // why these classes
	StagesKey      = contract.JobStages   // JSON group -> declared count, for deferred stages
	ClassAttribute = "${meta." + contract.NodeClass + "}"
	// NoClass is ClassesKey's value when Algorithm 1 names no class (lines
	// 15-17): the job carries no class rule and Nomad places it by its
	// default policy among the harvest driver's nodes.
	NoClass = "none"
)

// ClassSource gives Algorithm 1 its candidates for a job type.
type ClassSource interface {
	Candidates(ctx context.Context, jobType string) ([]selectclass.Candidate, error)
}

// JobHistory gives a job's last run.
type JobHistory interface {
	LastJobRun(ctx context.Context, namespace, job string) (history.JobRun, bool, error)
}

// Rewriter rewrites harvested jobs.
type Rewriter struct {
	Classes    ClassSource
	History    JobHistory
	Thresholds jobtype.Thresholds
	Weights    selectclass.Weights
	// LiveWeights, when set, win over Weights: the placer swaps them as
	// its policy document changes, while jobs are being rewritten.
	LiveWeights *LiveWeights
	// Namespaces whose every job is harvested, meta or not.
	Namespaces []string
	// Affinity writes the chosen classes as a Nomad affinity (a preference:
	// tasks spill to other harvested nodes when the classes are full)
	// instead of a constraint.
	// The simulator found the preference shortens jobs at high load
	// (harvest-sim sched -h-constraint compares).
	Affinity bool
	// NoClasses ties no job to a class: every harvested job runs wherever
	// the harvest driver admits it, as the paper's primary-tenant-aware
	// baseline (YARN-PT, history-based-harvesting.txt Section 6) does. The
	// rest of the rewrite (stages, restart and reschedule, meta) stays.
	NoClasses bool
	// NoRoomRule leaves out the constraint on the driver's published room
	// (room.go): Nomad then places by its own count of allocations, and
	// the driver refuses the starts that do not fit.
	NoRoomRule bool
	// RoomDevice, when set (room_placement = "device"), has every harvest
	// task ask for its cores as instances of the harvest-room device
	// instead of the CPU rule (room.go); with no core MHz known the CPU rule
	// stands.
	RoomDevice CoreMHzSource
	// Strategies are the optional placement strategies (issue 8).
	Strategies Strategies
	// Decisions, when set, keeps each registered job's decision.
	Decisions DecisionLog

	mu  sync.Mutex
	Rng selectclass.Rand // guarded by mu
}

// Decision is what the rewrite chose, for logs, metrics and harvestctl
// explain (the placer keeps the last one of each registered job): the
// wire type, api.Decision, built from the algorithms' results by
// decisionOf.
type Decision = api.Decision

// DecisionLog keeps the decisions of registered jobs.
type DecisionLog interface {
	Record(ctx context.Context, d *Decision) error
}

// BadJobError is a job the proxy refuses, as Nomad would a bad job.
type BadJobError struct{ Err error }

func (e *BadJobError) Error() string { return e.Err.Error() }
func (e *BadJobError) Unwrap() error { return e.Err }

// Rewrite takes a register body ({"Job": {...}, ...}) sent without a
// namespace query, as RewriteRequest does.
func (r *Rewriter) Rewrite(ctx context.Context, body []byte) ([]byte, *Decision, error) {
	return r.RewriteRequest(ctx, body, Request{Type: registerType})
}

// Request says how Nomad will read a job request body: as which of its
// request types, and with which ?namespace= query.
type Request struct {
	Type           reflect.Type // registerType, planType or validateType
	QueryNamespace string
}

// RewriteRequest reads a register, plan or validate body as Nomad will
// (canonical.go: duplicate keys refused, keys renamed to their struct
// field's spelling) and returns the body to forward, with the decision when
// the job is harvested (nil and the body itself otherwise). The job's
// namespace is the one Nomad will use: the ?namespace= query, else the
// request's Namespace, else the job's, else "default"; a harvested job is
// sent with it written into the job. Any error means nothing may be
// forwarded: a *BadJobError is the caller's fault (400), anything else the
// placer's (5xx).
func (r *Rewriter) RewriteRequest(ctx context.Context, body []byte, req Request) ([]byte, *Decision, error) {
	tree, err := readTree(body)
	if err != nil {
		return nil, nil, &BadJobError{fmt.Errorf("request body: %w", err)}
	}
	if err := canonicalize(tree, req.Type, ""); err != nil {
		return nil, nil, &BadJobError{fmt.Errorf("request body: %w", err)}
	}
	job, ok := tree["Job"].(map[string]any)
	if !ok {
		return body, nil, nil // no job: not a request Nomad would accept either; let Nomad say so
	}
	ns := req.QueryNamespace
	if ns == "" {
		ns = str(tree["Namespace"], str(job["Namespace"], "default"))
	}
	if !r.harvested(job, ns) {
		return body, nil, nil
	}
	d, err := r.decide(ctx, job, ns)
	if err != nil {
		return nil, nil, err
	}
	job["Namespace"] = ns
	apply(job, d, r.Affinity)
	if !r.NoRoomRule {
		coreMHz := 0.0
		if r.RoomDevice != nil {
			if coreMHz, err = r.RoomDevice.CoreMHz(ctx); err != nil {
				return nil, nil, fmt.Errorf("the harvest driver's core MHz for the room device: %w", err)
			}
		}
		constrainToRoom(job, coreMHz)
	}
	r.Strategies.applyStrategies(job, d)
	out, err := json.Marshal(tree)
	return out, d, err
}

func (r *Rewriter) harvested(job map[string]any, ns string) bool {
	if meta, ok := job["Meta"].(map[string]any); ok && str(meta[HarvestKey], "") == "true" {
		return true
	}
	for _, n := range r.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

func (r *Rewriter) decide(ctx context.Context, job map[string]any, ns string) (*Decision, error) {
	id := str(job["ID"], str(job["Name"], ""))
	stages, err := stagesOf(job)
	if err != nil {
		return nil, err
	}
	est, err := dag.Plan(stages)
	if err != nil {
		return nil, &BadJobError{err}
	}
	last, known, err := r.History.LastJobRun(ctx, ns, id)
	if err != nil {
		return nil, fmt.Errorf("job history of %s: %w", id, err)
	}
	expected, known, err := expectedDuration(job, last.Duration, known)
	if err != nil {
		return nil, err
	}
	typ := r.Thresholds.Of(expected, known)
	outcome, err := r.selectClasses(ctx, typ, est)
	if err != nil {
		return nil, err
	}
	d := &Decision{At: time.Now().UTC(), Namespace: ns, Job: id, JobType: typ, Estimate: estimateOf(est), Outcome: choiceOf(outcome),
		Deferred: map[string]int{}, Expected: expected, Known: known,
		Thresholds: api.JobTypeThresholds{Short: r.Thresholds.Short, Long: r.Thresholds.Long}}
	for _, s := range stages {
		if len(s.After) > 0 {
			d.Deferred[s.Name] = s.Count
		}
	}
	return d, nil
}

// NoClassesReason is a decision's reason under class_placement = "none".
const NoClassesReason = `class_placement = "none": no class rule (primary-tenant aware only)`

// selectClasses runs Algorithm 1 for a job of type typ and estimate est,
// unless the rewriter ties no job to a class.
func (r *Rewriter) selectClasses(ctx context.Context, typ string, est dag.Estimate) (selectclass.Outcome, error) {
	if r.NoClasses {
		return selectclass.Outcome{Reason: NoClassesReason}, nil
	}
	cands, err := r.Classes.Candidates(ctx, typ)
	if err != nil {
		return selectclass.Outcome{}, fmt.Errorf("classes: %w", err)
	}
	weights := r.Weights
	if r.LiveWeights != nil {
		weights = r.LiveWeights.Load()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return selectclass.Select(typ, selectclass.Request{CPU: float64(est.Peak.CPU), MemoryMB: float64(est.Peak.MemoryMB)}, cands, weights, r.Rng), nil
}

// StagesOf reads a job (as a JSON tree, the form Nomad's API sends) as DAG
// stages; harvestctl dag estimate uses it offline.
func StagesOf(job map[string]any) ([]dag.Stage, error) { return stagesOf(job) }

// stagesOf reads the task groups as DAG stages (Nomad's defaults: count 1,
// 100 MHz and 300 MB per task).
func stagesOf(job map[string]any) ([]dag.Stage, error) {
	groups, _ := job["TaskGroups"].([]any)
	var out []dag.Stage
	for i, g := range groups {
		group, ok := g.(map[string]any)
		if !ok {
			return nil, &BadJobError{fmt.Errorf("task group %d is not an object", i)}
		}
		s := dag.Stage{Name: str(group["Name"], ""), Count: num(group["Count"], 1)}
		if meta, ok := group["Meta"].(map[string]any); ok {
			s.After = dag.ParseAfter(str(meta[dag.AfterKey], ""))
		}
		tasks, _ := group["Tasks"].([]any)
		for _, t := range tasks {
			task, _ := t.(map[string]any)
			cpu, memory := askOf(task)
			s.CPU += cpu
			s.MemoryMB += memory
		}
		out = append(out, s)
	}
	return out, nil
}

// apply edits the job tree as the decision says. A job no class fits gets
// no class rule: "If Tez-H does not name a label, RM-H selects destination
// servers using its default policy" (history-based-harvesting.txt, Section
// 5; Algorithm 1, lines 15-17), so it runs at once wherever Nomad finds
// room on the harvest driver's nodes instead of waiting for a class.
func apply(job map[string]any, d *Decision, affinity bool) {
	// (the restart and reschedule defaults: see defaultReschedule)
	classes := strings.Join(d.Outcome.Classes, ",")
	switch {
	case classes == "":
		classes = NoClass
	case affinity:
		rule := map[string]any{"LTarget": ClassAttribute, "RTarget": classes, "Operand": "set_contains_any", "Weight": 100}
		affinities, _ := job["Affinities"].([]any)
		job["Affinities"] = append(affinities, rule)
	default:
		rule := map[string]any{"LTarget": ClassAttribute, "RTarget": classes, "Operand": "set_contains_any"}
		constraints, _ := job["Constraints"].([]any)
		job["Constraints"] = append(constraints, rule)
	}
	groups, _ := job["TaskGroups"].([]any)
	for _, g := range groups {
		group := g.(map[string]any)
		// a restart or reschedule block the user wrote wins over ours
		if group["RestartPolicy"] == nil {
			group["RestartPolicy"] = map[string]any{"Attempts": 0, "Mode": "fail", "Interval": int64(24 * 3600e9), "Delay": int64(5e9)}
		}
		if group["ReschedulePolicy"] == nil {
			group["ReschedulePolicy"] = defaultReschedule()
		}
		if _, deferred := d.Deferred[str(group["Name"], "")]; deferred {
			group["Count"] = 0
		}
	}
	meta, _ := job["Meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		job["Meta"] = meta
	}
	peak, _ := json.Marshal(d.Estimate.Peak)
	stages, _ := json.Marshal(d.Deferred)
	meta[ClassesKey] = classes
	meta[JobTypeKey] = d.JobType
	meta[EstimateKey] = string(peak)
	meta[ReasonKey] = d.Outcome.Reason
	if len(d.Deferred) > 0 {
		meta[StagesKey] = string(stages)
	}
}

// askOf is a task's CPU (MHz) and memory (MB), with Nomad's defaults of
// 100 MHz and 300 MB where the job leaves them out.
func askOf(task map[string]any) (cpu, memoryMB int) {
	res, _ := task["Resources"].(map[string]any)
	return num(res["CPU"], 100), num(res["MemoryMB"], 300)
}

func str(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

func num(v any, def int) int {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(i)
		}
	case float64:
		return int(n)
	case int:
		return n
	}
	return def
}

// defaultReschedule is a harvested group's reschedule policy unless its
// user wrote one: without limit, 5 s doubling up to a minute (Nomad's own
// default for service jobs). A harvested allocation ends by no fault of its
// own whenever its node's primary needs the room (an eviction) or the node
// has none left (a refused start: Nomad's scheduler knows allocations, and
// the primary's use only as of the room the driver last published), so
// under a steady stream a
// bounded policy (it was 5 attempts an hour) fails jobs for good that
// would run a minute later (the testbed, docs/testbed.md, showed it).
func defaultReschedule() map[string]any {
	return map[string]any{"Attempts": 0, "Interval": 0, "Delay": int64(5e9), "DelayFunction": "exponential",
		"MaxDelay": int64(60e9), "Unlimited": true}
}
