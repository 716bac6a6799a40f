package packer

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// Strategy keeps every harvested node's packing tier and the time it became
// empty in its meta (container-packing.txt); the proxy's tier affinities
// do the steering. Usage is harvested memory over harvestable memory, as
// the source measures memory.
type Strategy struct {
	view         cluster.View
	cfg          packing.Config
	releaseAfter time.Duration
	log          hclog.Logger
	metrics      *Metrics
	now          func() time.Time

	mu     sync.Mutex
	report api.PackingReport
}

// New is the packing block's strategy (s, as config.Decode gave it) over
// the shared view.
func New(view cluster.View, s config.PackingSettings, log hclog.Logger, m *Metrics) *Strategy {
	return &Strategy{view: view, cfg: s.Rule, releaseAfter: s.ReleaseAfter, log: log, metrics: m, now: time.Now}
}

// Report is the last pass's tiers and releasable nodes (GET /v1/packing).
func (p *Strategy) Report() api.PackingReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.report
}

// Pass labels every ready harvested node with its tier, once per change.
func (p *Strategy) Pass(ctx context.Context) error {
	now := p.now().UTC()
	nodes, err := p.view.HarvestedNodes(ctx)
	if err != nil {
		return err
	}
	jobs, err := p.view.HarvestedJobs(ctx)
	if err != nil {
		return err
	}
	allocs, err := p.view.Allocations(ctx)
	if err != nil {
		return err
	}
	used := map[string]float64{}
	for _, a := range allocs {
		if jobs[a.Namespace+"/"+a.JobID] != nil && cluster.Running(a) {
			used[a.NodeID] += cluster.MemoryMB(a)
		}
	}
	var in []packing.Node
	byID := map[string]cluster.Node{}
	inByID := map[string]packing.Node{}
	for _, n := range nodes {
		if !n.Ready {
			continue
		}
		byID[n.ID] = n
		pn := packing.Node{ID: n.ID, Used: used[n.ID], Capacity: n.Harvest}
		if pn.Used <= 0 {
			pn.EmptySince = now
			if t, err := time.Parse(time.RFC3339, n.Meta[proxy.EmptySinceKey]); err == nil {
				pn.EmptySince = t
			}
		}
		in = append(in, pn)
		inByID[n.ID] = pn
	}
	order, active := p.cfg.Order(in)
	report := api.PackingReport{Active: active, HighThreshold: p.cfg.HighThreshold, ReleaseAfter: p.releaseAfter.String(), Updated: now,
		Reason: "medium nodes first (fuller first), then low, then high (emptier first)"}
	if !active {
		report.Reason = "off: fewer ready harvested nodes than min_nodes"
		for _, n := range in {
			order = append(order, n.ID)
		}
	}
	releasable := map[string]bool{}
	for _, n := range packing.Releasable(in, now, p.releaseAfter) {
		releasable[n.ID] = true
	}
	tiers := map[packing.Tier]int{}
	for _, id := range order {
		n, pn := byID[id], inByID[id]
		tier := p.cfg.TierOf(pn)
		tiers[tier]++
		entry := api.PackingNode{Name: n.Name, ID: id, Tier: string(tier), UsedMB: pn.Used, HarvestMB: pn.Capacity, Releasable: releasable[id]}
		if !pn.EmptySince.IsZero() {
			t := pn.EmptySince
			entry.EmptySince = &t
		}
		report.Nodes = append(report.Nodes, entry)
		if err := p.label(ctx, n, tier, active, pn.EmptySince); err != nil {
			return err
		}
	}
	p.metrics.observe(tiers, len(releasable))
	p.mu.Lock()
	p.report = report
	p.mu.Unlock()
	return nil
}

// label brings one node's packing meta in line, writing only on change.
func (p *Strategy) label(ctx context.Context, n cluster.Node, tier packing.Tier, active bool, emptySince time.Time) error {
	set := map[string]string{}
	var unset []string
	want := map[string]string{proxy.PackTierKey: "", proxy.EmptySinceKey: ""}
	if active {
		want[proxy.PackTierKey] = string(tier)
	}
	if !emptySince.IsZero() {
		want[proxy.EmptySinceKey] = emptySince.UTC().Format(time.RFC3339)
	}
	for k, v := range want {
		switch {
		case v == "" && n.Meta[k] != "":
			unset = append(unset, k)
		case v != "" && n.Meta[k] != v:
			set[k] = v
		}
	}
	if len(set) == 0 && len(unset) == 0 {
		return nil
	}
	p.log.Debug("packing tier", "node", n.Name, "set", set, "unset", unset)
	return p.view.ApplyMeta(ctx, n.ID, set, unset...)
}
