package partitioner

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/partition"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// Document is the name of the partition's state in Harvest's KV prefix.
const Document = "partition"

// Strategy keeps the short-job partition (hybrid-scheduling.txt): the
// cutoff follows finished harvested jobs' durations, the partition's size
// follows the cutoff, and the nodes on it carry PartitionKey = "short".
// The proxy asks it for the cutoff; the sequencer tells it of finished runs.
type Strategy struct {
	view    cluster.View
	store   *history.Store
	cfg     config.PartitionConfig
	log     hclog.Logger
	metrics *Metrics
	now     func() time.Time

	mu    sync.Mutex
	state *partition.State // nil until the first pass knows the cluster's size
	saved api.PartitionState
}

var _ interface{ Cutoff() time.Duration } = (*Strategy)(nil)

// New is the partition block's strategy (cfg: its sizes follow the
// cluster, so its rule is decoded per pass) over the shared view, its
// state kept in store.
func New(view cluster.View, store *history.Store, cfg config.PartitionConfig, log hclog.Logger, m *Metrics) *Strategy {
	return &Strategy{view: view, store: store, cfg: cfg, log: log, metrics: m, now: time.Now}
}

// Cutoff is the current short/long cutoff.
func (p *Strategy) Cutoff() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == nil {
		c, _ := p.cfg.Rule(1)
		return c.InitialCutoff
	}
	return p.state.Cutoff
}

// State is the partition now.
func (p *Strategy) State() api.PartitionState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.saved
}

// Observe feeds a finished job run (by its run key) to the cutoff rule,
// once per run.
func (p *Strategy) Observe(ctx context.Context, run string, d time.Duration) error {
	p.mu.Lock()
	if p.state == nil || slices.Contains(p.saved.Seen, run) {
		p.mu.Unlock()
		return nil
	}
	moved := p.state.Observe(d)
	p.saved.Seen = append(p.saved.Seen, run)
	if len(p.saved.Seen) > 256 {
		p.saved.Seen = p.saved.Seen[len(p.saved.Seen)-256:]
	}
	if moved {
		p.saved.Moves++
		p.log.Info("short/long cutoff moved", "cutoff", p.state.Cutoff, "partition_size", p.state.Size, "after", d)
	}
	p.snapshot()
	saved := p.saved
	p.mu.Unlock()
	return p.store.PutDocument(ctx, Document, saved)
}

func (p *Strategy) snapshot() {
	p.saved.Cutoff, p.saved.Size, p.saved.Recent = p.state.Cutoff, p.state.Size, p.state.Recent()
	p.saved.Updated = p.now().UTC()
}

// Pass resumes the state on the first run and then labels the partition's
// nodes: current members stay while ready; more are taken, or the last
// ones given back, in name order (stable, so nodes do not flap).
func (p *Strategy) Pass(ctx context.Context) error {
	nodes, err := p.view.HarvestedNodes(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	if p.state == nil {
		if len(nodes) == 0 {
			p.mu.Unlock()
			return nil
		}
		cfg, err := p.cfg.Rule(len(nodes))
		if err != nil {
			p.mu.Unlock()
			return err
		}
		var kept api.PartitionState
		resumed, err := p.store.GetDocument(ctx, Document, &kept)
		if err != nil {
			p.mu.Unlock()
			return err
		}
		p.state = partition.New(cfg)
		if resumed {
			p.state, p.saved = partition.Restore(cfg, kept.Cutoff, kept.Size, kept.Recent), kept
		}
		p.snapshot()
		p.log.Info("short-job partition", "cutoff", p.state.Cutoff, "size", p.state.Size, "resumed", resumed)
	}
	size := p.state.Size
	p.mu.Unlock()

	var members, others []cluster.Node
	for _, n := range nodes {
		switch {
		case !n.Ready:
		case n.Meta[proxy.PartitionKey] == proxy.PartitionShort:
			members = append(members, n)
		default:
			others = append(others, n)
		}
	}
	sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	sort.Slice(others, func(i, j int) bool { return others[i].Name < others[j].Name })
	for len(members) > size {
		members = members[:len(members)-1]
	}
	for len(members) < size && len(others) > 0 {
		members, others = append(members, others[0]), others[1:]
	}
	want := map[string]bool{}
	var names []string
	for _, n := range members {
		want[n.ID] = true
		names = append(names, n.Name)
	}
	for _, n := range nodes {
		in := n.Meta[proxy.PartitionKey] == proxy.PartitionShort
		switch {
		case want[n.ID] && !in:
			err = p.view.ApplyMeta(ctx, n.ID, map[string]string{proxy.PartitionKey: proxy.PartitionShort})
			p.log.Info("node joins the short-job partition", "node", n.Name)
		case !want[n.ID] && in:
			err = p.view.ApplyMeta(ctx, n.ID, nil, proxy.PartitionKey)
			p.log.Info("node leaves the short-job partition", "node", n.Name)
		}
		if err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.saved.Nodes = names
	p.metrics.cutoff.Set(p.state.Cutoff.Seconds())
	p.metrics.partition.Set(float64(len(names)))
	return nil
}
