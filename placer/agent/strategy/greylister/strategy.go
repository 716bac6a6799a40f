package greylister

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/greylist"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// Strategy counts failures of harvested allocations per node
// (placement-escalation.txt, "Node reliability tracking"): evictions by
// the harvest driver's reserve, preemptions and the task's own memory
// limit do not count; a node at the threshold is greylisted through its
// meta until the counters reset.
type Strategy struct {
	view    cluster.View
	tracker *greylist.Tracker
	reset   time.Duration
	log     hclog.Logger
	metrics *Metrics
	now     func() time.Time

	mu     sync.Mutex
	seen   map[string]bool // failed allocations already counted
	report api.GreylistReport
}

// New is the greylist block's strategy (s, as config.Decode gave it) over
// the shared view.
func New(view cluster.View, s config.GreylistSettings, log hclog.Logger, m *Metrics) *Strategy {
	return &Strategy{view: view, tracker: greylist.NewTracker(s.Threshold, s.Reset, time.Now()), reset: s.Reset,
		log: log, metrics: m, now: time.Now, seen: map[string]bool{}}
}

// failureKind says why a failed or lost allocation ended, as the tracker
// counts it.
func failureKind(a *nomadapi.AllocationListStub) greylist.FailureKind {
	if a.PreemptedByAllocation != "" {
		return greylist.Preempted
	}
	if a.ClientStatus == nomadapi.AllocClientStatusLost {
		return greylist.NodeFault // the node went away
	}
	for _, st := range a.TaskStates {
		if st == nil {
			continue
		}
		for _, ev := range st.Events {
			if contract.IsEviction(ev.Details, ev.DisplayMessage, ev.Message) {
				return greylist.Evicted
			}
			if ev.Details["oom_killed"] == "true" {
				return greylist.TaskFault
			}
		}
	}
	return greylist.NodeFault
}

// Report is the failure counts and the greylisted nodes (GET /v1/greylist).
func (g *Strategy) Report() api.GreylistReport {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.report
}

// Pass counts the new failures of harvested allocations and marks or
// unmarks the nodes at the threshold.
func (g *Strategy) Pass(ctx context.Context) error {
	now := g.now()
	jobs, err := g.view.HarvestedJobs(ctx)
	if err != nil {
		return err
	}
	allocs, err := g.view.Allocations(ctx)
	if err != nil {
		return err
	}
	g.mu.Lock()
	present := make(map[string]bool, len(allocs))
	for _, a := range allocs {
		present[a.ID] = true
	}
	for id := range g.seen { // forget allocations Nomad has collected
		if !present[id] {
			delete(g.seen, id)
		}
	}
	for _, a := range allocs {
		failed := a.ClientStatus == nomadapi.AllocClientStatusFailed || a.ClientStatus == nomadapi.AllocClientStatusLost
		at := time.Unix(0, a.ModifyTime)
		if !failed || g.seen[a.ID] || jobs[a.Namespace+"/"+a.JobID] == nil || now.Sub(at) > g.reset {
			continue
		}
		g.seen[a.ID] = true
		kind := failureKind(a)
		g.tracker.Record(a.NodeName, kind, now)
		g.metrics.failure(kind)
		g.log.Info("harvested allocation failed", "node", a.NodeName, "job", a.JobID, "alloc", a.ID, "kind", kind)
	}
	grey := g.tracker.Greylisted(now)
	g.report = api.GreylistReport{Threshold: g.tracker.Threshold, Reset: g.reset.String(), Failures: g.tracker.Counts(now),
		Greylisted: grey, Updated: now.UTC()}
	g.mu.Unlock()
	g.metrics.greylisted.Set(float64(len(grey)))

	nodes, err := g.view.HarvestedNodes(ctx)
	if err != nil {
		return err
	}
	isGrey := map[string]bool{}
	for _, n := range grey {
		isGrey[n] = true
	}
	for _, n := range nodes {
		marked := n.Meta[proxy.GreylistKey] == proxy.GreylistedTrue
		switch {
		case isGrey[n.Name] && !marked:
			g.log.Warn("node greylisted: harvested jobs avoid it until the counters reset", "node", n.Name, "reset", g.reset)
			err = g.view.ApplyMeta(ctx, n.ID, map[string]string{proxy.GreylistKey: proxy.GreylistedTrue})
		case !isGrey[n.Name] && marked:
			g.log.Info("node no longer greylisted", "node", n.Name)
			err = g.view.ApplyMeta(ctx, n.ID, nil, proxy.GreylistKey)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
