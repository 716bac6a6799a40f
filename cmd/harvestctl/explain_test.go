package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
)

func evictedAlloc(evictedAt time.Time) *nomadapi.Allocation {
	return &nomadapi.Allocation{
		ID: "0123456789abcdef0123456789abcdef0123", Namespace: "default", JobID: "etl", TaskGroup: "work", NodeName: "client-1",
		ClientStatus: "failed", NextAllocation: "fedcba9876543210fedcba9876543210fedc",
		TaskStates: map[string]*nomadapi.TaskState{"t": {State: "dead", Failed: true, Events: []*nomadapi.TaskEvent{
			{Type: "Started", Time: evictedAt.Add(-time.Minute).UnixNano(), DisplayMessage: "Task started by client"},
			{Type: "Driver", Time: evictedAt.Add(-5 * time.Second).UnixNano(), DriverMessage: "suppressed",
				Details: map[string]string{"harvest.suppressed": "true", "harvest.cap_cores": "0.1", "harvest.need_cores": "0.75"}},
			{Type: "Driver", Time: evictedAt.UnixNano(), DriverMessage: "evicted: the primary tenant needs the CPU",
				Details: map[string]string{"harvest.evicted": "true", "harvest.reason": "cpu", "harvest.primary_cores": "1.62",
					"harvest.primary_rounded_cores": "2", "harvest.reserve_cores": "0.5", "harvest.cap_cores": "0",
					"harvest.need_cores": "0.75", "harvest.victims": "t@aaaa,t@0123", "harvest.victim_rank": "2/2",
					"harvest.task_started": "2026-11-27T10:00:00Z"}},
		}}},
	}
}

func TestExplainAllocTellsTheEvictionsFiguresAndWhereTheWorkWent(t *testing.T) {
	e := allocExplanation(evictedAlloc(time.Now()))
	if !strings.HasPrefix(e.Verdict, "evicted by the harvest driver (cpu)") {
		t.Errorf("verdict %q", e.Verdict)
	}
	task := e.Tasks[0]
	if task.Eviction["victims"] != "t@aaaa,t@0123" || task.Suppression["cap_cores"] != "0.1" || len(task.Timeline) != 3 {
		t.Errorf("task explanation %+v", task)
	}
	var out bytes.Buffer
	if err := printAllocExplanation(&out, e, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"primary 1.62 cores measured (2 rounded up)", "Victims, youngest first: t@aaaa, t@0123 (this task: 2/2)",
		"Suppressed:", "Nomad replaced it with allocation fedcba98"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain alloc lacks %q:\n%s", want, out.String())
		}
	}
}

func TestStatusCountsRunningHarvestTasksAndLastHoursEvictions(t *testing.T) {
	now := time.Now()
	name, cpu, mem := "work", 250, 64
	running := &nomadapi.Allocation{TaskGroup: "work", ClientStatus: "running",
		Job: &nomadapi.Job{TaskGroups: []*nomadapi.TaskGroup{{Name: &name, Tasks: []*nomadapi.Task{
			{Name: "t", Driver: "harvest", Resources: &nomadapi.Resources{CPU: &cpu, MemoryMB: &mem}},
			{Name: "side", Driver: "raw_exec", Resources: &nomadapi.Resources{CPU: &cpu, MemoryMB: &mem}}}}}},
		TaskStates: map[string]*nomadapi.TaskState{"t": {State: "running"}, "side": {State: "running"}}}
	var s NodeStanding
	harvestedOn(&s, []*nomadapi.Allocation{running, evictedAlloc(now.Add(-10 * time.Minute)), evictedAlloc(now.Add(-2 * time.Hour))}, now)
	if s.HarvestedTasks != 1 || s.HarvestedMHz != 250 || s.HarvestedMB != 64 || s.EvictionsHour != 1 {
		t.Errorf("standing %+v: want 1 harvest task of 250 MHz/64 MB and 1 eviction in the hour", s)
	}
}

func TestExplainJobShowsEveryClassAlgorithmOneWeighed(t *testing.T) {
	e := &JobExplanation{Namespace: "default", Job: "etl", Meta: map[string]string{"harvest_classes": "c1"},
		Decision: &api.Decision{At: time.Now(), JobType: "medium", Thresholds: api.JobTypeThresholds{Short: 173 * time.Second, Long: 433 * time.Second},
			Estimate: api.Estimate{Peak: api.JobResources{CPU: 2000, MemoryMB: 512, Tasks: 4}, Levels: [][]string{{"a"}, {"b", "c"}}},
			Outcome: api.ClassChoice{Classes: []string{"c1"}, Fit: "one", Reason: "c1 alone holds the peak",
				Considered: []api.ConsideredClass{{Class: "c0", Pattern: "unpredictable", RoomCPU: 900, Weight: 0.2},
					{Class: "c1", Pattern: "periodic", RoomCPU: 5000, Weight: 1, WeightedRoom: 5000, Fits: true}}}},
		Rules:  []string{"job: constraint ${meta.harvest_class} set_contains_any \"c1\""},
		Allocs: []AllocOutcome{{ID: "0123456789ab", Group: "a", Node: "client-2", Status: "complete", Evicted: true}}}
	var out bytes.Buffer
	if err := printJobExplanation(&out, e, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Type: medium", "4 tasks, 2000 MHz, 512 MB", "[a] then [b c]", "fit one, classes [c1]",
		"c0     unpredictable", "harvest_classes = c1", "explain alloc 01234567"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain job lacks %q:\n%s", want, out.String())
		}
	}
}

// TestStatusJSONWithoutAPrimaryMeasurement: a node whose primary nobody
// measured yet still prints as JSON (it once failed: NaN is no JSON).
func TestStatusJSONWithoutAPrimaryMeasurement(t *testing.T) {
	var out bytes.Buffer
	if err := printStatus(&out, []NodeStanding{{Node: "client-1", Status: "ready"}}, "", true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"node": "client-1"`) || strings.Contains(out.String(), "primary_cpu_percent") {
		t.Fatalf("status JSON %s", out.String())
	}
}

// TestObjectExplanationShowsEachReplicaAndWhatAReadFinds: the table names
// every replica's node with its state (readable, busy, down, not
// configured), cell and busy hours, then how many a read finds now and the
// expected hours a day all are busy.
func TestObjectExplanationShowsEachReplicaAndWhatAReadFinds(t *testing.T) {
	var b strings.Builder
	printObjectExplanation(&b, api.BlobObject{Bucket: "data", Key: "a/b", Size: 10, ETag: "e", Version: "v1", ReadableNow: 1, AllBusyHoursPerDay: 0.25,
		Replicas: []api.BlobReplica{
			{Node: "n1", Tenant: "t1", Configured: true, Row: 0, Col: 2, Up: true, BusyHours: []float64{0.5, 0.5}},
			{Node: "n2", Tenant: "t2", Configured: true, Row: 1, Col: 0, Up: true, Busy: true},
			{Node: "n3", Tenant: "t3", Configured: true, Row: -1, Col: -1},
			{Node: "n4", Row: -1, Col: -1},
		}})
	out := b.String()
	for _, want := range []string{`Object data/a/b: 10 bytes`, `(?m)^n1\s+t1\s.*0,2\s+readable\s.*\s1\.0$`, `(?m)^n2\s+t2\s.*1,0\s+busy\s.*no history$`,
		`(?m)^n3\s+t3\s.*-\s+down\s`, `(?m)^n4\s.*not configured`, `1 of 4 replicas readable now`, `0\.25 hours a day`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}
