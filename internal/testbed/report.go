package testbed

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Report is one run's outcome; times are trace seconds unless named wall.
type Report struct {
	Policy  Policy  `json:"policy"`
	Seed    uint64  `json:"seed"`
	Clients int     `json:"clients"`
	Speedup float64 `json:"speedup"`
	// TraceHours of span, from SpanStart (trace and wall time at once).
	TraceHours float64   `json:"trace_hours"`
	SpanStart  time.Time `json:"span_start"`
	JobScale   float64   `json:"job_scale"`
	// NoRoomRule and SchedulerAlgorithm are the run's named deviations
	// (Config): the proxy without the room rule, Nomad's scheduler
	// algorithm when set.
	NoRoomRule         bool   `json:"no_room_rule,omitempty"`
	RoomDevice         bool   `json:"room_device,omitempty"`
	SchedulerAlgorithm string `json:"scheduler_algorithm,omitempty"`
	// EscalationDelay is the escalation block's delay when the run set one
	// (Config.EscalationDelay; wall time).
	EscalationDelay string `json:"escalation_delay,omitempty"`
	// Labels are the clients' classes (pattern) when the span began.
	Labels map[string]string `json:"labels"`

	Submitted     int       `json:"submitted"`
	SubmitErrors  int       `json:"submit_errors"`
	Finished      int       `json:"finished"`
	Unfinished    int       `json:"unfinished"`
	JobSeconds    Summary   `json:"job_seconds"` // arrival to last task's end, queueing counted
	JobSecondsAll []float64 `json:"job_seconds_all"`
	// FinishedInSpan and JobSecondsInSpan count the jobs done by the
	// span's end, as the simulator does.
	FinishedInSpan   int     `json:"finished_in_span"`
	JobSecondsInSpan Summary `json:"job_seconds_in_span"`
	// StageTimes is where the finished jobs' time went beyond their tasks'
	// lengths: what the simulator does not model.
	StageTimes *StageTimes `json:"stage_times,omitempty"`
	// Kills are allocations the harvest driver evicted, Refused the starts
	// it refused (Nomad placed them where the primary left no room),
	// Failures the other failed ones. Wasted is the killed and failed
	// tasks' run time.
	Kills         int            `json:"kills"`
	KillsByReason map[string]int `json:"kills_by_reason"`
	Refused       int            `json:"refused"`
	Failures      int            `json:"failures"`
	// Abandoned are failed allocations Nomad did not reschedule: work
	// given up on (its job can never finish).
	Abandoned         int     `json:"abandoned"`
	WastedTaskSeconds float64 `json:"wasted_task_seconds"`
	// Breaches are the spans (wall seconds) in which a client's primary
	// (its replayed trace) and the harvested allocations running there
	// exceeded its cores; BreachBound is the driver's eviction bound they
	// are held to.
	Breaches          []float64 `json:"breaches_wall_seconds"`
	BreachBound       float64   `json:"breach_bound_wall_seconds"`
	LongestBreach     float64   `json:"longest_breach_wall_seconds"`
	BreachesOverBound int       `json:"breaches_over_bound"`
	// StartDelay is Nomad's own delay from an allocation's creation to its
	// task's start (wall seconds), against the shortest task.
	StartDelay       Summary `json:"start_delay_wall_seconds"`
	ShortestTaskWall float64 `json:"shortest_task_wall_seconds"`
	// Allocations is every allocation of the stream's jobs (refused and
	// evicted ones included); HostBusySeconds the CPU time the host spent
	// busy from the span's start to the end of the drain, so
	// HostCPUPerAllocation is what one allocation cost this host, all
	// daemons included (an upper bound: the replay and idle daemons count).
	Allocations          int     `json:"allocations"`
	HostBusySeconds      float64 `json:"host_busy_cpu_seconds"`
	HostCPUPerAllocation float64 `json:"host_cpu_seconds_per_allocation"`
	// DaemonCPUSeconds is each role's time on a CPU (the scheduler's
	// accounting of the cluster's agents, the clients' harvest plugins, the
	// placer and the blob front) from the span's start to the end of the
	// drain, DaemonCores their sum over that wall time: what the control
	// plane costs, whatever else the host runs. Tasks and their executors
	// are not counted.
	DaemonCPUSeconds map[string]float64 `json:"daemon_cpu_seconds"`
	DaemonCores      float64            `json:"daemon_cores"`
	// Evaluations counts Nomad's evaluations at the end by trigger: every
	// refused start is an "alloc-failure" one, every published room that
	// changed a node a "node-update" one per job on it.
	Evaluations map[string]int `json:"evaluations_by_trigger"`
	// Utilisation is the harvested allocations' and the primaries' share
	// of all cores every 10 trace minutes, from the span's start to the
	// end of the drain.
	Utilisation []UtilisationPoint `json:"utilisation"`
	// RealPrimary is the real primary's latency per minute (nil unless the
	// run had one: Config.RealPrimary).
	RealPrimary *RealPrimaryReport `json:"real_primary,omitempty"`
	// Blob is the blob tier's part (nil when the run started none).
	Blob *BlobReport `json:"blob,omitempty"`
	// UnfinishedJobs are the jobs not finished at the end, as Nomad held
	// them then (why a stage waits).
	UnfinishedJobs []UnfinishedJob `json:"unfinished_jobs,omitempty"`
	WatchErrors    int             `json:"watch_errors"`
	// DaemonErrorLines are each daemon's log lines at ERROR in the run, the
	// driver's refused starts left out (they are Refused).
	DaemonErrorLines map[string]int `json:"daemon_error_lines"`
	// Escalations are the placer's escalations under H in the run, by the
	// kind of wait: "blocked" (nothing placed) and "partly_placed".
	Escalations map[string]int `json:"escalations,omitempty"`
	Simulator   *SimPrediction `json:"simulator,omitempty"`
	// SimulatorWithDelay is the simulator with every container held for
	// the testbed's median start delay (StartDelay.P50 x Speedup).
	SimulatorWithDelay *SimPrediction `json:"simulator_with_start_delay,omitempty"`
	// SimulatorWithStageDelay is that, each stage boundary also held for
	// the testbed's mean release (StageTimes.Release.Mean).
	SimulatorWithStageDelay *SimPrediction `json:"simulator_with_start_and_stage_delays,omitempty"`
}

// Summary is a distribution's mean and percentiles.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func summarize(v []float64) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, s, nil) }
	return Summary{N: len(s), Mean: stat.Mean(s, nil), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: s[len(s)-1]}
}

// jobOutcome says whether a job finished, and when (wall): every stage
// has as many completed allocations (distinct names) as tasks.
func jobOutcome(j *job, allocs []alloc) (time.Time, bool) {
	done := map[string]map[string]bool{}
	var last time.Time
	for _, a := range allocs {
		if a.Status != "complete" {
			continue
		}
		if done[a.Group] == nil {
			done[a.Group] = map[string]bool{}
		}
		done[a.Group][a.Name] = true
		if a.Finished.After(last) {
			last = a.Finished
		}
	}
	for s, tasks := range j.Stages {
		if len(done["s"+strconv.Itoa(s+1)]) < len(tasks) {
			return time.Time{}, false
		}
	}
	return last, true
}

// ofJob groups the allocations by stream job: the parent and its stage
// jobs (<job>.<group>).
func ofJob(allocs []alloc) map[string][]alloc {
	out := map[string][]alloc{}
	for _, a := range allocs {
		id, _, _ := strings.Cut(a.Job, ".")
		out[id] = append(out[id], a)
	}
	return out
}

// primaryAt is a client's primary's CPU (cores) at a wall time, as the
// cluster's exporter replays it; false for a node the run does not know.
type primaryAt func(node string, wall time.Time) (float64, bool)

// breaches returns the spans (wall seconds) in which a client's primary
// plus one core per harvested allocation running there exceeded the
// client's cores, from began to end; the primary steps every slotWall.
func breaches(allocs []alloc, primary primaryAt, cores float64, began, end time.Time, slotWall time.Duration) []float64 {
	byNode := map[string][]alloc{}
	for _, a := range allocs {
		if !a.Started.IsZero() {
			byNode[a.Node] = append(byNode[a.Node], a)
		}
	}
	var out []float64
	for name, list := range byNode {
		if _, ok := primary(name, began); !ok {
			continue
		}
		// every moment the count or the primary can change
		cuts := []time.Time{began, end}
		for t := began.Add(slotWall); t.Before(end); t = t.Add(slotWall) {
			cuts = append(cuts, t)
		}
		for _, a := range list {
			cuts = append(cuts, a.Started, finishOr(a, end))
		}
		sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
		var open time.Time
		for i := 0; i+1 < len(cuts); i++ {
			from, to := cuts[i], cuts[i+1]
			if !to.After(from) || from.Before(began) || !from.Before(end) {
				continue
			}
			mid := from.Add(to.Sub(from) / 2)
			running := 0
			for _, a := range list {
				if !a.Started.After(mid) && finishOr(a, end).After(mid) {
					running++
				}
			}
			p, _ := primary(name, mid)
			over := p+float64(running) > cores+1e-9
			switch {
			case over && open.IsZero():
				open = from
			case !over && !open.IsZero():
				out = append(out, from.Sub(open).Seconds())
				open = time.Time{}
			}
		}
		if !open.IsZero() {
			out = append(out, end.Sub(open).Seconds())
		}
	}
	sort.Float64s(out)
	return out
}

func finishOr(a alloc, end time.Time) time.Time {
	if a.Finished.IsZero() || a.Finished.After(end) {
		return end
	}
	return a.Finished
}

// Label is the run's policy with its named deviations, if any.
func (r *Report) Label() string {
	var dev []string
	if r.RoomDevice {
		dev = append(dev, "room device")
	}
	if r.NoRoomRule {
		dev = append(dev, "no room rule")
	}
	if r.SchedulerAlgorithm != "" {
		dev = append(dev, r.SchedulerAlgorithm)
	}
	if r.EscalationDelay != "" {
		dev = append(dev, "escalation after "+r.EscalationDelay)
	}
	if len(dev) == 0 {
		return string(r.Policy)
	}
	return fmt.Sprintf("%s (%s)", r.Policy, strings.Join(dev, ", "))
}
