package agent

import (
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/classroom"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/agent/strategy/escalator"
	"github.com/harvest-platform/harvest/placer/agent/strategy/greylister"
	"github.com/harvest-platform/harvest/placer/agent/strategy/packer"
	"github.com/harvest-platform/harvest/placer/agent/strategy/partitioner"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// strategies are the placer's optional placement strategies from the
// other sources (issue 8: packing, the short-job partition, greylisting,
// escalation; each a package of placer/agent/strategy), each a loop; a nil
// field is a strategy that is off. ("Policy" means one thing in Harvest:
// the operator's policy document, placer/agent/declarations.)
type strategies struct {
	view      cluster.View // shared with the declarations' publishing
	classes   *classroom.View
	packer    *packer.Strategy
	partition *partitioner.Strategy
	greylist  *greylister.Strategy
	escalator *escalator.Strategy
	loops     []loop // the enabled strategies' passes
}

// strategyMetrics are every placement strategy's metrics, registered
// whether the strategy is on or not.
type strategyMetrics struct {
	packing    *packer.Metrics
	partition  *partitioner.Metrics
	greylist   *greylister.Metrics
	escalation *escalator.Metrics
}

func newStrategyMetrics(reg prometheus.Registerer) strategyMetrics {
	return strategyMetrics{packing: packer.NewMetrics(reg), partition: partitioner.NewMetrics(reg),
		greylist: greylister.NewMetrics(reg), escalation: escalator.NewMetrics(reg)}
}

// setupStrategies builds the loops the configuration enables, with their
// settings as config.Decode gave them (a.set).
func (a *Agent) setupStrategies(cfg config.Config, nomad *nomadapi.Client) {
	view := cluster.New(nomad)
	metrics := newStrategyMetrics(a.metrics.Registry)
	p := strategies{view: view, classes: classroom.New(a.store, view, 10*time.Second, time.Now)}
	set := a.set
	if cfg.Packing.Enabled {
		ps := set.Packing
		p.packer = packer.New(view, ps, a.log.Named("packing"), metrics.packing)
		p.loops = append(p.loops, loop{name: "packing", interval: ps.Interval, pass: p.packer.Pass})
	}
	if cfg.Partition.Enabled {
		p.partition = partitioner.New(view, a.store, cfg.Partition, a.log.Named("partition"), metrics.partition)
		p.loops = append(p.loops, loop{name: "partition", interval: 10 * time.Second, pass: p.partition.Pass})
	}
	if cfg.Greylist.Enabled {
		gs := set.Greylist
		p.greylist = greylister.New(view, gs, a.log.Named("greylist"), metrics.greylist)
		p.loops = append(p.loops, loop{name: "greylist", interval: gs.Interval, pass: p.greylist.Pass})
	}
	if cfg.Escalation.Enabled {
		es := set.Escalation
		p.escalator = escalator.New(view, nomad, p.classes, a.weights, admissions.New(a.store), es,
			a.log.Named("escalation"), metrics.escalation)
		p.loops = append(p.loops, loop{name: "escalation", interval: es.Interval, pass: p.escalator.Pass})
	}
	a.strategies = p
}

// rules are what the proxy adds to harvested jobs for the strategies on.
func (p strategies) rules() proxy.Strategies {
	r := proxy.Strategies{Packing: p.packer != nil, Greylist: p.greylist != nil}
	if p.partition != nil {
		r.Partition = p.partition
	}
	return r
}

// logEnabled says which strategies are on.
func (p strategies) logEnabled(log hclog.Logger) {
	for _, l := range p.loops {
		log.Named(l.name).Info("placement strategy on", "interval", l.interval)
	}
}
