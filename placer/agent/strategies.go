package agent

import (
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/classroom"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/greylist"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// strategies are the placer's optional placement strategies from the
// other sources (issue 8: packing, the short-job partition, greylisting,
// escalation), each a loop; a nil field is a strategy that is off. ("Policy"
// means one thing in Harvest: the operator's policy document, policydoc.go.)
type strategies struct {
	view      cluster.View // shared with the declarations' publishing
	classes   *classroom.View
	packer    *packer
	partition *partitioner
	greylist  *greylister
	escalator *escalator
	loops     []loop // the enabled strategies' passes
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
		p.packer = &packer{view: view, cfg: ps.Rule, releaseAfter: ps.ReleaseAfter, log: a.log.Named("packing"), metrics: metrics, now: time.Now}
		p.loops = append(p.loops, loop{"packing", ps.Interval, p.packer.pass})
	}
	if cfg.Partition.Enabled {
		p.partition = &partitioner{view: view, store: a.store, cfg: cfg.Partition, log: a.log.Named("partition"), metrics: metrics, now: time.Now}
		p.loops = append(p.loops, loop{"partition", 10 * time.Second, p.partition.pass})
	}
	if cfg.Greylist.Enabled {
		gs := set.Greylist
		p.greylist = &greylister{view: view, tracker: greylist.NewTracker(gs.Threshold, gs.Reset, time.Now()), reset: gs.Reset,
			log: a.log.Named("greylist"), metrics: metrics, now: time.Now, seen: map[string]bool{}}
		p.loops = append(p.loops, loop{"greylist", gs.Interval, p.greylist.pass})
	}
	if cfg.Escalation.Enabled {
		es := set.Escalation
		p.escalator = &escalator{view: view, nomad: nomad, classes: p.classes, weights: a.weights, delay: es.Delay, extra: es.ExtraClasses,
			log: a.log.Named("escalation"), metrics: metrics, now: time.Now, admitted: admissions.New(a.store)}
		p.loops = append(p.loops, loop{"escalation", es.Interval, p.escalator.pass})
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
