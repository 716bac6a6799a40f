package classes

import (
	"context"
	"time"

	"github.com/harvest-platform/harvest/placer/labels"
)

// now is the tests' clock.
var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// fakeNodes is an in-memory Nomad for the refresher.
type fakeNodes struct {
	nodes []labels.Node
}

func (f *fakeNodes) Nodes(context.Context) ([]labels.Node, error) { return f.nodes, nil }

func (f *fakeNodes) ApplyMeta(_ context.Context, u labels.Update) error {
	for i := range f.nodes {
		if f.nodes[i].ID == u.NodeID {
			for k, v := range u.Set {
				f.nodes[i].Meta[k] = v
			}
			for _, k := range u.Unset {
				delete(f.nodes[i].Meta, k)
			}
		}
	}
	return nil
}
