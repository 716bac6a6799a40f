// Package labelstest owns the placer's test double of Nomad's node API as
// the class table uses it (list the nodes, apply their meta): the nodes in
// memory, the lists counted.
package labelstest

import (
	"context"

	"github.com/harvest-platform/harvest/placer/labels"
)

// Nodes is an in-memory Nomad for the class table's refresher.
type Nodes struct {
	List  []labels.Node
	Lists int // Nodes calls
}

// Nodes returns List and counts the call.
func (f *Nodes) Nodes(context.Context) ([]labels.Node, error) {
	f.Lists++
	return f.List, nil
}

// ApplyMeta sets and unsets the update's meta on its node.
func (f *Nodes) ApplyMeta(_ context.Context, u labels.Update) error {
	for i := range f.List {
		if f.List[i].ID == u.NodeID {
			for k, v := range u.Set {
				f.List[i].Meta[k] = v
			}
			for _, k := range u.Unset {
				delete(f.List[i].Meta, k)
			}
		}
	}
	return nil
}
