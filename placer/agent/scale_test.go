package agent

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/agent/sequencer"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// scaleCounts are the Nomad requests a placer with every loop on made over
// one window of an unchanged cluster (idle) and over one window in which
// one allocation completed (change).
type scaleCounts struct {
	idle, change           int
	idleKinds, changeKinds map[string]int
}

// TestPlacerNomadCallsGrowWithChangesNotTimeOrSize runs the placer's loops
// (class refresh, declarations, stage sequencer, packing, partition,
// greylist, escalation: every placement strategy on) against a fake Nomad of 100 nodes
// with 20 running harvested DAG jobs and one of 1,000 nodes with 200, and
// counts its requests. With HARVEST_MEASURE=1 each window is a minute, so
// the counts are calls per minute.
func TestPlacerNomadCallsGrowWithChangesNotTimeOrSize(t *testing.T) {
	window := 5 * time.Second
	if os.Getenv("HARVEST_MEASURE") == "1" {
		window = time.Minute
	}
	var small, large scaleCounts
	t.Run("sizes", func(t *testing.T) {
		t.Run("100", func(t *testing.T) { t.Parallel(); small = scaleRun(t, 100, 20, window) })
		t.Run("1000", func(t *testing.T) { t.Parallel(); large = scaleRun(t, 1000, 200, window) })
	})
	for _, c := range []struct {
		name string
		got  scaleCounts
	}{{"100 nodes, 20 jobs", small}, {"1,000 nodes, 200 jobs", large}} {
		t.Logf("%s: %d requests in %s unchanged %v; %d in %s with one allocation completed %v",
			c.name, c.got.idle, window, c.got.idleKinds, c.got.change, window, c.got.changeKinds)
	}
	// an unchanged cluster costs nothing, whatever its size or the time
	// passed (the blocking queries wait 5 minutes); one change costs a
	// re-read of the list that changed and the query after it
	if small.idle > 0 || large.idle > 0 {
		t.Errorf("an unchanged cluster cost %d (100 nodes) and %d (1,000 nodes) requests in %s, want none", small.idle, large.idle, window)
	}
	if small.change > 3 || large.change > 3 {
		t.Errorf("one completed allocation cost %d (100 nodes) and %d (1,000 nodes) requests, want at most 3", small.change, large.change)
	}
}

func scaleRun(t *testing.T, nodes, jobs int, window time.Duration) scaleCounts {
	t.Helper()
	fake := nomadtest.NewScaleNomad(nodes, jobs)
	client := fake.Serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // before srv.Close: ends the blocking queries
	store := history.NewStore(kv.NewMem(), "harvest/")
	adm := admissions.New(store)
	for _, j := range fake.Jobs {
		if err := adm.Admit(ctx, *j.Namespace, *j.ID, *j.JobModifyIndex); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Packing.Enabled, cfg.Partition.Enabled, cfg.Greylist.Enabled, cfg.Escalation.Enabled = true, true, true, true
	log := hclog.NewNullLogger()
	a := &Agent{log: log, store: store, metrics: NewMetrics(), set: decoded(t, cfg), now: time.Now}
	a.refresher = &classes.Refresher{Store: store, Config: classify.Default(), Log: log, Metrics: a.metrics, Now: time.Now}
	a.weights = proxy.NewLiveWeights(selectclass.DefaultWeights())
	a.setupStrategies(cfg, client)
	a.refresher.Nodes = cluster.NodeAPI{View: a.strategies.view}
	a.setupDeclarations(a.strategies.view)
	a.sequencer = sequencer.New(client, a.strategies.view, store, adm, log)
	a.startLoops(ctx)

	// the first passes read every node and label them, and the next ones
	// read the nodes they labelled: wait for a quiet spell longer than the
	// longest loop interval (10 s), at most a minute
	quiet := 11 * time.Second
	for deadline, last, since := time.Now().Add(time.Minute), -1, time.Now(); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if n := fake.Total(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > quiet {
			break
		}
	}
	if fake.Snapshot()["GET /v1/node/:id"] < nodes {
		t.Fatalf("after the first passes the placer had read %d of %d nodes", fake.Snapshot()["GET /v1/node/:id"], nodes)
	}
	count := func() (int, map[string]int) {
		before := fake.Snapshot()
		time.Sleep(window)
		diff := map[string]int{}
		total := 0
		for k, v := range fake.Snapshot() {
			if d := v - before[k]; d > 0 {
				diff[k] = d
				total += d
			}
		}
		return total, diff
	}
	var c scaleCounts
	c.idle, c.idleKinds = count()
	fake.CompleteAlloc(0)
	c.change, c.changeKinds = count()
	return c
}
