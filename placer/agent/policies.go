package agent

import (
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/greylist"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// policies are the placer's optional policy loops (issue 8); a nil field
// is a policy that is off.
type policies struct {
	view      clusterView // shared with the declarations' publishing
	classes   *classView
	packer    *packer
	partition *partitioner
	greylist  *greylister
	escalator *escalator
	loops     []loop // the enabled policies' passes
}

// setupPolicies builds the loops the configuration enables, with their
// settings as a.set decoded them.
func (a *Agent) setupPolicies(cfg Config, nomad *nomadapi.Client) {
	view := newClusterView(nomad)
	metrics := newPolicyMetrics(a.metrics.Registry)
	p := policies{view: view, classes: &classView{store: a.store, view: view, ttl: 10 * time.Second, now: time.Now}}
	set := a.set
	if cfg.Packing.Enabled {
		ps := set.packing
		p.packer = &packer{view: view, cfg: ps.cfg, releaseAfter: ps.releaseAfter, log: a.log.Named("packing"), metrics: metrics, now: time.Now}
		p.loops = append(p.loops, loop{"packing", ps.interval, p.packer.pass})
	}
	if cfg.Partition.Enabled {
		p.partition = &partitioner{view: view, store: a.store, cfg: cfg.Partition, log: a.log.Named("partition"), metrics: metrics, now: time.Now}
		p.loops = append(p.loops, loop{"partition", 10 * time.Second, p.partition.pass})
	}
	if cfg.Greylist.Enabled {
		gs := set.greylist
		p.greylist = &greylister{view: view, tracker: greylist.NewTracker(gs.threshold, gs.reset, time.Now()), reset: gs.reset,
			log: a.log.Named("greylist"), metrics: metrics, now: time.Now, seen: map[string]bool{}}
		p.loops = append(p.loops, loop{"greylist", gs.interval, p.greylist.pass})
	}
	if cfg.Escalation.Enabled {
		es := set.escalation
		p.escalator = &escalator{view: view, nomad: nomad, classes: p.classes, weights: a.weights, delay: es.delay, extra: es.extra,
			log: a.log.Named("escalation"), metrics: metrics, now: time.Now, admitted: admissions{store: a.store}}
		p.loops = append(p.loops, loop{"escalation", es.interval, p.escalator.pass})
	}
	a.policies = p
}

// rules are what the proxy adds to harvested jobs for the policies on.
func (p policies) rules() proxy.Policies {
	r := proxy.Policies{Packing: p.packer != nil, Greylist: p.greylist != nil}
	if p.partition != nil {
		r.Partition = p.partition
	}
	return r
}

// logEnabled says which policies are on.
func (p policies) logEnabled(log hclog.Logger) {
	for _, l := range p.loops {
		log.Named(l.name).Info("policy on", "interval", l.interval)
	}
}
