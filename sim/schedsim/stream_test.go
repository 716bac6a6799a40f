package schedsim

import (
	"testing"
	"time"
)

// The stream a testbed replays is the simulator's own: as many jobs as a
// run counts arrived, in order, under every policy, and scaled as the run
// scales them.
func TestStreamIsTheRunsArrivals(t *testing.T) {
	cfg := spikeScenario(PT)
	cfg.Arrivals = nil
	cfg.JobsPerHour = 60
	cfg.JobScale = 0.5
	cfg.Mix = TPCDSMix()
	jobs, scale, rate, err := Stream(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if scale != 0.5 || rate != 60.0/3600 {
		t.Fatalf("scale %v rate %v", scale, rate)
	}
	for _, p := range []Policy{Stock, PT, History} {
		cfg.Policy = p
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Arrived != len(jobs) || len(jobs) < 30 {
			t.Fatalf("%v: the run counted %d arrivals, the stream has %d", p, res.Arrived, len(jobs))
		}
	}
	for i, j := range jobs {
		if i > 0 && j.At <= jobs[i-1].At || j.At >= time.Hour.Seconds() || len(j.Stages) == 0 || j.Class == "" {
			t.Fatalf("job %d: %+v", i, j)
		}
	}
	again, _, _, _ := Stream(cfg)
	if len(again) != len(jobs) || again[3].Stages[0][0] != jobs[3].Stages[0][0] {
		t.Fatal("the stream is not reproducible")
	}
}

// A start delay holds each container that long before its task runs: the
// spike scenario's one 600 s task finishes 30 s later.
func TestStartDelayLengthensEveryTask(t *testing.T) {
	cfg := spikeScenario(Stock)
	base, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StartDelay = 30 * time.Second
	delayed, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if delayed.MeanJobSeconds != base.MeanJobSeconds+30 {
		t.Fatalf("job took %v with the delay, %v without", delayed.MeanJobSeconds, base.MeanJobSeconds)
	}
}

// A stage delay holds each stage boundary that long: a job of three
// one-task stages of 600 s takes 2 x 45 s more; a one-stage job none.
func TestStageDelayHoldsEachStageBoundary(t *testing.T) {
	for stages, want := range map[int]float64{1: 0, 3: 90} {
		cfg := spikeScenario(Stock)
		cfg.Tenants = []Tenant{{ID: "a/primary", Servers: 1, Series: flat(90, 0, 0, 0)}}
		cfg.Span = 3 * time.Hour
		cfg.Mix.Classes[0].Stages = [2]int{stages, stages}
		base, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.StageDelay = 45 * time.Second
		delayed, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if base.Jobs != 1 || delayed.Jobs != 1 || delayed.MeanJobSeconds != base.MeanJobSeconds+want {
			t.Fatalf("%d stages: job took %v with the delay, %v without (%d, %d jobs); want %v more", stages, delayed.MeanJobSeconds, base.MeanJobSeconds, delayed.Jobs, base.Jobs, want)
		}
	}
}
