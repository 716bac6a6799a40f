package agent

import (
	"context"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// decisionLog keeps decisions in Consul KV.
type decisionLog struct{ store *history.Store }

func (l decisionLog) Record(ctx context.Context, d *proxy.Decision) error {
	return l.store.PutDocument(ctx, contract.DecisionDocument(d.Namespace, d.Job), d)
}
