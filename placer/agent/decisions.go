package agent

import (
	"context"
	"net/url"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// DecisionsDir is the document folder (under the KV prefix) where the
// placer keeps the last admission decision of every harvested job it
// registered: decisions/<namespace>/<job>, both path-escaped.
const DecisionsDir = "decisions/"

// DecisionDocument is the document name of a job's decision.
func DecisionDocument(namespace, job string) string {
	return DecisionsDir + url.PathEscape(namespace) + "/" + url.PathEscape(job)
}

// decisionLog keeps decisions in Consul KV.
type decisionLog struct{ store *history.Store }

func (l decisionLog) Record(ctx context.Context, d *proxy.Decision) error {
	return l.store.PutDocument(ctx, DecisionDocument(d.Namespace, d.Job), d)
}
