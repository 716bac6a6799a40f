package ingest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
)

var ingestNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

const ingestRetention = 42 * 24 * time.Hour

func ingestBody(tenant string, samples ...api.IngestSample) string {
	b, _ := json.Marshal(api.IngestRequest{Tenant: tenant, Samples: samples})
	return string(b)
}

func TestIngestRefusesWhatWouldBloatConsul(t *testing.T) {
	ok := api.IngestSample{Node: "client-1", Time: ingestNow.Add(-time.Hour), CPU: 40}
	many := func(n int, f func(i int) api.IngestSample) []api.IngestSample {
		out := make([]api.IngestSample, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for name, c := range map[string]struct {
		body, want string
	}{
		"good":            {ingestBody("search/frontend", ok), ""},
		"unknown field":   {`{"tenant":"a/b","samples":[],"extra":1}`, "unknown field"},
		"trailing data":   {ingestBody("search/frontend", ok) + `{"tenant":"x/y"}`, "data after"},
		"bad tenant":      {ingestBody("../etc", ok), "must be 1-63 letters"},
		"no samples":      {ingestBody("a/b"), "no samples"},
		"future":          {ingestBody("a/b", api.IngestSample{Node: "n", Time: ingestNow.Add(time.Hour), CPU: 1}), "outside the history's window"},
		"too old":         {ingestBody("a/b", api.IngestSample{Node: "n", Time: ingestNow.Add(-ingestRetention - time.Hour), CPU: 1}), "outside the history's window"},
		"year 1":          {`{"tenant":"a/b","samples":[{"node":"n","time":"0001-01-01T00:00:00Z","cpu_percent":1}]}`, "outside the history's window"},
		"node with slash": {ingestBody("a/b", api.IngestSample{Node: "a/../b", Time: ok.Time, CPU: 1}), "node"},
		"long node":       {ingestBody("a/b", api.IngestSample{Node: strings.Repeat("n", 129), Time: ok.Time, CPU: 1}), "node"},
		"empty node":      {ingestBody("a/b", api.IngestSample{Time: ok.Time, CPU: 1}), "node"},
		"over 100":        {ingestBody("a/b", api.IngestSample{Node: "n", Time: ok.Time, CPU: 100.5}), "outside 0-100"},
		"negative":        {ingestBody("a/b", api.IngestSample{Node: "n", Time: ok.Time, CPU: -1}), "outside 0-100"},
		"too many samples": {ingestBody("a/b", many(maxIngestSamples+1, func(i int) api.IngestSample {
			return api.IngestSample{Node: "n", Time: ok.Time, CPU: 1}
		})...), "samples, at most"},
		"too many nodes": {ingestBody("a/b", many(maxIngestNodes+1, func(i int) api.IngestSample {
			return api.IngestSample{Node: fmt.Sprintf("n%d", i), Time: ok.Time, CPU: 1}
		})...), "distinct nodes"},
		"too many days": {ingestBody("a/b", many(maxIngestDays+1, func(i int) api.IngestSample {
			return api.IngestSample{Node: "n", Time: ingestNow.Add(-time.Duration(i) * 24 * time.Hour), CPU: 1}
		})...), "days"},
	} {
		_, err := parseIngest([]byte(c.body), ingestNow, ingestRetention)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}

func TestIngestBoundsWhatATenantMayGrowTo(t *testing.T) {
	in := parsedIngest{tenant: history.TenantID{Environment: "a", Function: "b"}, nodes: []string{"new-1", "new-2"}}
	full := make([]string, maxTenantNodes-1)
	for i := range full {
		full[i] = fmt.Sprintf("n%d", i)
	}
	known := []history.TenantInfo{{Environment: "a", Function: "b", Nodes: full}}
	if err := checkGrowth(known, in); err == nil || !strings.Contains(err.Error(), "would list") {
		t.Fatalf("one node over the cap: %v", err)
	}
	in.nodes = []string{"n1", "new-1"} // one known, one new: exactly at the cap
	if err := checkGrowth(known, in); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	if err := checkGrowth(make([]history.TenantInfo, maxTenants), in); err == nil {
		t.Fatal("a tenant beyond maxTenants was accepted")
	}
}

// FuzzIngestBody: whatever the body, parseIngest never panics, and what it
// accepts is inside every bound.
func FuzzIngestBody(f *testing.F) {
	f.Add(ingestBody("search/frontend", api.IngestSample{Node: "client-1", Time: ingestNow.Add(-time.Hour), CPU: 40}))
	f.Add(`{"tenant":"a/b","samples":[{"node":"n","time":"2026-03-10T11:00:00Z","cpu_percent":1e308}]}`)
	f.Add(`{"tenant":"a/b","samples":[{"node":"n","time":"2026-03-10T11:00:00+14:00","cpu_percent":0}]}`)
	f.Add(`{"tenant":"a/b","samples":null}`)
	f.Add(`{"Tenant":"a/b","SAMPLES":[{"NODE":"n","Time":"2026-03-10T11:00:00Z","cpu_percent":"1"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		in, err := parseIngest([]byte(body), ingestNow, ingestRetention)
		if err != nil {
			return
		}
		if in.tenant.Validate() != nil || len(in.samples) == 0 || len(in.samples) > maxIngestSamples || len(in.nodes) > maxIngestNodes {
			t.Fatalf("accepted out of bounds: tenant %q, %d samples, %d nodes", in.tenant, len(in.samples), len(in.nodes))
		}
		days := map[history.Date]bool{}
		for _, s := range in.samples {
			if !nodeName.MatchString(s.Node) || math.IsNaN(s.CPU) || s.CPU < 0 || s.CPU > 100 ||
				s.Time.Before(ingestNow.Add(-ingestRetention)) || s.Time.After(ingestNow.Add(ingestFuture)) {
				t.Fatalf("accepted a bad sample: %+v", s)
			}
			days[history.DateOf(s.Time)] = true
		}
		if len(days) > maxIngestDays {
			t.Fatalf("accepted %d days", len(days))
		}
	})
}
