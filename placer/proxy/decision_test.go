package proxy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/placer/dag"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// A decision stored before the wire type moved to api (the algorithms'
// own types embedded) reads into api.Decision field for field, with no
// field left over: decisions kept in Consul survive an upgrade, and the
// wire type says everything the algorithms' types said.
func TestDecisionReadsTheAlgorithmsJSON(t *testing.T) {
	est := dag.Estimate{Peak: dag.Resources{CPU: 2000, MemoryMB: 512, Tasks: 4}, Levels: [][]string{{"a"}, {"b", "c"}},
		Level: []dag.Resources{{CPU: 500, MemoryMB: 128, Tasks: 1}, {CPU: 2000, MemoryMB: 512, Tasks: 4}}}
	out := selectclass.Outcome{Classes: []string{"c1"}, Fit: "one", Reason: "c1 alone holds the peak",
		Considered: []selectclass.Considered{{Class: "c1", Pattern: "periodic", RoomCPU: 5000, RoomMemoryMB: 900, Weight: 1,
			WeightedRoom: 5000, Fits: true}}}
	old := struct {
		At         time.Time           `json:"at"`
		Namespace  string              `json:"namespace"`
		Job        string              `json:"job"`
		JobType    string              `json:"job_type"`
		Estimate   dag.Estimate        `json:"estimate"`
		Outcome    selectclass.Outcome `json:"outcome"`
		Deferred   map[string]int      `json:"deferred_stages,omitempty"`
		Expected   time.Duration       `json:"expected"`
		Known      bool                `json:"known"`
		Thresholds jobtype.Thresholds  `json:"thresholds"`
	}{At: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), Namespace: "default", Job: "etl", JobType: "medium", Estimate: est,
		Outcome: out, Deferred: map[string]int{"b": 2}, Expected: time.Minute, Known: true, Thresholds: jobtype.Default()}
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var got api.Decision
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := api.Decision{At: old.At, Namespace: "default", Job: "etl", JobType: "medium", Estimate: estimateOf(est),
		Outcome: choiceOf(out), Deferred: old.Deferred, Expected: time.Minute, Known: true,
		Thresholds: api.JobTypeThresholds{Short: old.Thresholds.Short, Long: old.Thresholds.Long}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v\nwant %+v", got, want)
	}
	again, _ := json.Marshal(got)
	if !bytes.Equal(again, raw) {
		t.Fatalf("written again differently:\n%s\n%s", again, raw)
	}
}
