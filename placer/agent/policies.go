package agent

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/escalation"
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
	loops     []policyLoop
}

// policyLoop is one enabled policy's pass and how often it runs.
type policyLoop struct {
	name     string
	interval time.Duration
	pass     func(context.Context) error
}

// setupPolicies builds the loops the configuration enables.
func (a *Agent) setupPolicies(cfg Config, nomad *nomadapi.Client) error {
	view := newClusterView(nomad)
	metrics := newPolicyMetrics(a.metrics.Registry)
	p := policies{view: view, classes: &classView{store: a.store, view: view, ttl: 10 * time.Second, now: time.Now}}
	if cfg.Packing.Enabled {
		pc, interval, release, err := cfg.Packing.settings()
		if err != nil {
			return err
		}
		p.packer = &packer{view: view, cfg: pc, releaseAfter: release, log: a.log.Named("packing"), metrics: metrics, now: time.Now}
		p.loops = append(p.loops, policyLoop{"packing", interval, p.packer.pass})
	}
	if cfg.Partition.Enabled {
		p.partition = &partitioner{view: view, store: a.store, cfg: cfg.Partition, log: a.log.Named("partition"), metrics: metrics, now: time.Now}
		p.loops = append(p.loops, policyLoop{"partition", 10 * time.Second, p.partition.pass})
	}
	if cfg.Greylist.Enabled {
		threshold, reset, interval, err := cfg.Greylist.settings()
		if err != nil {
			return err
		}
		p.greylist = &greylister{view: view, tracker: escalation.NewTracker(threshold, reset, time.Now()), reset: reset,
			log: a.log.Named("greylist"), metrics: metrics, now: time.Now, seen: map[string]bool{}}
		p.loops = append(p.loops, policyLoop{"greylist", interval, p.greylist.pass})
	}
	if cfg.Escalation.Enabled {
		delay, interval, extra, err := cfg.Escalation.settings()
		if err != nil {
			return err
		}
		p.escalator = &escalator{view: view, nomad: nomad, classes: p.classes, weights: a.weights, delay: delay, extra: extra,
			log: a.log.Named("escalation"), metrics: metrics, now: time.Now, admitted: admissions{store: a.store}}
		p.loops = append(p.loops, policyLoop{"escalation", interval, p.escalator.pass})
	}
	a.policies = p
	return nil
}

// rules are what the proxy adds to harvested jobs for the policies on.
func (p policies) rules() proxy.Policies {
	r := proxy.Policies{Packing: p.packer != nil, Greylist: p.greylist != nil}
	if p.partition != nil {
		r.Partition = p.partition
	}
	return r
}

// run starts each enabled loop until ctx ends.
func (p policies) run(ctx context.Context, log hclog.Logger) {
	for _, l := range p.loops {
		logger := log.Named(l.name)
		logger.Info("policy on", "interval", l.interval)
		go every(ctx, l.interval, l.pass, func(err error) { logger.Warn("policy pass failed", "error", err) })
	}
}
