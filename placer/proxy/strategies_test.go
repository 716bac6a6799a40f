package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

type fixedCutoff time.Duration

func (c fixedCutoff) Cutoff() time.Duration { return time.Duration(c) }

func rewriteWith(t *testing.T, p Strategies, body string) map[string]any {
	t.Helper()
	rw := &Rewriter{
		Classes:    fakeClasses{{Class: "constant-1", Pattern: "constant", RoomCPU: 10000, RoomMemoryMB: 32768}},
		History:    fakeHistory{"default/etl": 20 * time.Minute, "default/quick": 30 * time.Second},
		Thresholds: jobtype.Default(), Weights: selectclass.DefaultWeights(), Rng: rand.New(rand.NewPCG(1, 1)),
		Strategies: p,
	}
	out, d, err := rw.Rewrite(context.Background(), []byte(body))
	if err != nil || d == nil {
		t.Fatalf("rewrite: %v (decision %v)", err, d)
	}
	var got struct{ Job map[string]any }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got.Job
}

func rules(job map[string]any, field, ltarget string) []map[string]any {
	var out []map[string]any
	list, _ := job[field].([]any)
	for _, r := range list {
		if m := r.(map[string]any); m["LTarget"] == ltarget {
			out = append(out, m)
		}
	}
	return out
}

func jobBody(id, meta string) string {
	return `{"Job":{"ID":"` + id + `","Type":"batch","Meta":{"harvest":"true"` + meta + `},
	 "TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"harvest"}]}]}}`
}

func TestStrategiesOffAddNothing(t *testing.T) {
	job := rewriteWith(t, Strategies{}, jobBody("etl", ""))
	if len(job["Constraints"].([]any)) != 1 || job["Affinities"] != nil {
		t.Fatalf("constraints %v affinities %v", job["Constraints"], job["Affinities"])
	}
}

func TestPackingAddsTierAffinitiesMediumFirst(t *testing.T) {
	job := rewriteWith(t, Strategies{Packing: true}, jobBody("etl", ""))
	aff := rules(job, "Affinities", "${meta.harvest_pack_tier}")
	if len(aff) != 3 {
		t.Fatalf("affinities %v", job["Affinities"])
	}
	w := map[string]float64{}
	for _, a := range aff {
		w[a["RTarget"].(string)] = a["Weight"].(float64)
	}
	if !(w["medium"] > w["low"] && w["low"] > 0 && w["high"] < 0) {
		t.Fatalf("weights %v: want medium > low > 0 > high", w)
	}
}

func TestGreylistConstraintAvoidsGreylistedNodes(t *testing.T) {
	job := rewriteWith(t, Strategies{Greylist: true}, jobBody("etl", ""))
	c := rules(job, "Constraints", "${meta.harvest_greylisted}")
	if len(c) != 1 || c[0]["Operand"] != "!=" || c[0]["RTarget"] != "true" {
		t.Fatalf("constraints %v", job["Constraints"])
	}
}

func TestPartitionKeepsLongAndUnknownJobsOff(t *testing.T) {
	p := Strategies{Partition: fixedCutoff(90 * time.Second)}
	for _, tc := range []struct {
		name, id, meta string
		excluded       bool
		why            string
	}{
		{"long by history", "etl", "", true, "long: expected 20m0s > cutoff 1m30s"},
		{"short by history", "quick", "", false, "short: expected 30s <= cutoff 1m30s"},
		{"unknown", "new", "", true, "general: no run of this job on record"},
		{"declared short", "new", `,"harvest_expected":"40s"`, false, "short: expected 40s"},
		{"declared long", "new", `,"harvest_expected":"2h"`, true, "long: expected 2h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := rewriteWith(t, p, jobBody(tc.id, tc.meta))
			c := rules(job, "Constraints", "${meta.harvest_partition}")
			if (len(c) == 1) != tc.excluded || (tc.excluded && (c[0]["Operand"] != "!=" || c[0]["RTarget"] != "short")) {
				t.Fatalf("constraints %v", job["Constraints"])
			}
			why := job["Meta"].(map[string]any)[PartitionWhy].(string)
			if !strings.HasPrefix(why, tc.why) {
				t.Fatalf("reason %q, want prefix %q", why, tc.why)
			}
		})
	}
}

func TestDeclaredDurationTypesTheJobAndBadOnesAreRefused(t *testing.T) {
	job := rewriteWith(t, Strategies{}, jobBody("new", `,"harvest_expected":"30s"`))
	if job["Meta"].(map[string]any)[JobTypeKey] != "short" {
		t.Fatalf("meta %v", job["Meta"])
	}
	rw := &Rewriter{Classes: fakeClasses{}, History: fakeHistory{}, Thresholds: jobtype.Default(),
		Weights: selectclass.DefaultWeights(), Rng: rand.New(rand.NewPCG(1, 1))}
	_, _, err := rw.Rewrite(context.Background(), []byte(jobBody("new", `,"harvest_expected":"soon"`)))
	var bad *BadJobError
	if err == nil || !errors.As(err, &bad) || !strings.Contains(err.Error(), `harvest_expected = "soon"`) {
		t.Fatalf("err %v", err)
	}
}
