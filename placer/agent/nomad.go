package agent

import (
	"context"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/placer/labels"
)

// NomadNodes adapts Nomad's API to NodeAPI.
type NomadNodes struct{ Client *nomadapi.Client }

var _ NodeAPI = (*NomadNodes)(nil)

// Nodes lists every node with its merged (static and dynamic) meta and its
// attributes. The list endpoint carries neither, so each node is read.
func (n *NomadNodes) Nodes(ctx context.Context) ([]labels.Node, error) {
	q := (&nomadapi.QueryOptions{}).WithContext(ctx)
	stubs, _, err := n.Client.Nodes().List(q)
	if err != nil {
		return nil, err
	}
	out := make([]labels.Node, 0, len(stubs))
	for _, s := range stubs {
		node, _, err := n.Client.Nodes().Info(s.ID, q)
		if err != nil {
			return nil, err
		}
		out = append(out, labels.Node{ID: node.ID, Name: node.Name, Meta: node.Meta, Attributes: node.Attributes})
	}
	return out, nil
}

// ApplyMeta sets and unsets a node's dynamic meta in one request.
func (n *NomadNodes) ApplyMeta(ctx context.Context, u labels.Update) error {
	meta := map[string]*string{}
	for k, v := range u.Set {
		meta[k] = &v
	}
	for _, k := range u.Unset {
		meta[k] = nil
	}
	_, err := n.Client.Nodes().Meta().Apply(&nomadapi.NodeMetaApplyRequest{NodeID: u.NodeID, Meta: meta},
		(&nomadapi.QueryOptions{}).WithContext(ctx))
	return err
}
