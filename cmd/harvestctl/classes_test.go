package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/placer/survival"
)

// A placer that answers a refresh with a table carrying survival, an
// unknown point among it (null on the wire) and a class without figures.
func TestClassesSurvivalTableFromThePlacer(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	var points []api.SurvivalPoint
	for i, l := range survival.DefaultLengths() {
		p := share(1 - 0.1*float64(i))
		if i == len(survival.DefaultLengths())-1 {
			p = nil
		}
		points = append(points, api.SurvivalPoint{Length: l, Probability: p, Tasks: 10})
	}
	table := api.ClassTable{Generated: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), Classes: []api.Class{
		{Name: "periodic-1", Pattern: "periodic", Survival: points,
			SurvivalByJobType: map[string]api.JobTypeSurvival{
				"short":  {Length: 173 * time.Second, Probability: share(0.987)},
				"medium": {Length: 433 * time.Second, Probability: share(0.95)},
				"long":   {Length: 866 * time.Second, Probability: share(0.9)},
			}},
		{Name: "constant-1", Pattern: "constant", SurvivalUnavailable: "no node of the class reports"},
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/classes/refresh" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(table)
	}))
	defer srv.Close()
	got, err := refreshClasses(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := printStored(&b, got, false, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`CLASS\s+PATTERN\s+2m\s+10m\s+30m\s+1h\s+2h\s+4h\s+8h\s+24h\s+SHORT 2m53s\s+MEDIUM 7m13s\s+LONG 14m26s`,
		`periodic-1\s+periodic\s+100.0%\s+90.0%\s+80.0%\s+70.0%\s+60.0%\s+50.0%\s+40.0%\s+-\s+98.7%\s+95.0%\s+90.0%`,
		`constant-1: no figures: no node of the class reports`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "constant-1  constant") {
		t.Errorf("a class without figures has a row:\n%s", out)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{2 * time.Minute: "2m", time.Hour: "1h", 24 * time.Hour: "24h",
		173 * time.Second: "2m53s", 90 * time.Minute: "1h30m", 30 * time.Second: "30s"} {
		if got := shortDuration(d); got != want {
			t.Errorf("%s: %q, want %q", d, got, want)
		}
	}
}
