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
	classes   *classView
	packer    *packer
	partition *partitioner
	greylist  *greylister
	escalator *escalator
	intervals map[string]time.Duration
	metrics   *policyMetrics
}

// setupPolicies builds the loops the configuration enables.
func (a *Agent) setupPolicies(cfg Config, nomad *nomadapi.Client) error {
	view := clusterView{nomad: nomad, applied: &appliedMeta{nodes: map[string]map[string]string{}}}
	p := policies{classes: &classView{store: a.store, nomad: nomad, ttl: 10 * time.Second},
		intervals: map[string]time.Duration{}, metrics: newPolicyMetrics(a.metrics.Registry)}
	if cfg.Packing.Enabled {
		pc, interval, release, err := cfg.Packing.settings()
		if err != nil {
			return err
		}
		p.packer = &packer{view: view, cfg: pc, releaseAfter: release, log: a.log.Named("packing"), metrics: p.metrics, now: time.Now}
		p.intervals["packing"] = interval
	}
	if cfg.Partition.Enabled {
		p.partition = &partitioner{view: view, store: a.store, cfg: cfg.Partition, log: a.log.Named("partition"), now: time.Now}
		p.intervals["partition"] = 10 * time.Second
	}
	if cfg.Greylist.Enabled {
		threshold, reset, interval, err := cfg.Greylist.settings()
		if err != nil {
			return err
		}
		p.greylist = &greylister{view: view, tracker: escalation.NewTracker(threshold, reset, time.Now()), reset: reset,
			log: a.log.Named("greylist"), metrics: p.metrics, now: time.Now, seen: map[string]bool{}}
		p.intervals["greylist"] = interval
	}
	if cfg.Escalation.Enabled {
		delay, interval, extra, err := cfg.Escalation.settings()
		if err != nil {
			return err
		}
		p.escalator = &escalator{view: view, nomad: nomad, classes: p.classes, weights: cfg.weights(), delay: delay, extra: extra,
			log: a.log.Named("escalation"), metrics: p.metrics, now: time.Now}
		p.intervals["escalation"] = interval
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
	loops := map[string]func(context.Context) error{}
	if p.packer != nil {
		loops["packing"] = p.packer.pass
	}
	if p.partition != nil {
		loops["partition"] = func(ctx context.Context) error {
			err := p.partition.pass(ctx)
			st := p.partition.State()
			p.metrics.cutoff.Set(st.Cutoff.Seconds())
			p.metrics.partition.Set(float64(len(st.Nodes)))
			return err
		}
	}
	if p.greylist != nil {
		loops["greylist"] = p.greylist.pass
	}
	if p.escalator != nil {
		loops["escalation"] = p.escalator.pass
	}
	for name, fn := range loops {
		l := log.Named(name)
		l.Info("policy on", "interval", p.intervals[name])
		go every(ctx, p.intervals[name], fn, func(err error) { l.Warn("policy pass failed", "error", err) })
	}
}
